#!/usr/bin/env bash
# Load test of the PostgreSQL store, bounded in count and time, on loopback only: PROCESSES worker
# processes × CONTEXTS threads each do read-modify-write increments of COUNTERS shared counters for
# SECONDS, then the counters are read back and must equal the acknowledged increments (zero lost
# updates). Prints saves per second, p50/p99 latency and conflicts.
#
#   Adapters/PostgreSQL/scripts/load-test.sh [PROCESSES=8] [CONTEXTS=4] [SECONDS=60] [COUNTERS=16]
#
# Starts its own throwaway server with scripts/postgres.sh unless MODELSTORE_POSTGRES_URL is set.
set -euo pipefail
cd "$(dirname "$0")/../../.."
processes="${1:-8}" contexts="${2:-4}" seconds="${3:-60}" counters="${4:-16}"
if [ -z "${MODELSTORE_POSTGRES_URL:-}" ]; then
    exec scripts/postgres.sh run -- "$0" "$@"
fi
swift build -c release --package-path Adapters/PostgreSQL --product modelstore-pg-worker >&2
worker="$(swift build -c release --package-path Adapters/PostgreSQL --show-bin-path)/modelstore-pg-worker"
namespace="load_$(date +%s)"
"$worker" setup "$namespace" "$counters"
out="$(mktemp -d)"
start=$(date +%s.%N)
for i in $(seq 1 "$processes"); do
    "$worker" "$namespace" 1000000 "$counters" "$seconds" "$contexts" >"$out/$i.txt" &
done
wait
end=$(date +%s.%N)
stored=$(psql -At -c "SELECT coalesce(sum(value), 0) FROM \"$namespace\".\"Counter\"")
python3 - "$out" "$start" "$end" "$stored" <<'PY'
import pathlib, sys
out, start, end, stored = pathlib.Path(sys.argv[1]), float(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4])
fields = [dict(item.split("=", 1) for item in path.read_text().split()) for path in sorted(out.glob("*.txt"))]
acknowledged = sum(int(f["acknowledged"]) for f in fields)
conflicts = sum(int(f["conflicts"]) for f in fields)
elapsed = end - start
print(f"processes={len(fields)} acknowledged={acknowledged} stored={stored} conflicts={conflicts}")
print(f"saves/s={acknowledged / elapsed:.0f} p50us(max over processes)={max(int(f['p50us']) for f in fields)} "
      f"p99us(max over processes)={max(int(f['p99us']) for f in fields)}")
sys.exit(0 if stored == acknowledged else 1)
PY
echo "lost updates: none (stored counters equal acknowledged increments)"
rm -rf "$out"
