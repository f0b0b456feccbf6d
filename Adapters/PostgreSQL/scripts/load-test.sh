#!/usr/bin/env bash
# Load test of the PostgreSQL store, bounded in count and time, on loopback only: PROCESSES worker
# processes × CONTEXTS threads each do read-modify-write increments of COUNTERS shared counters for
# SECONDS, then the counters are read back and must equal the acknowledged increments (zero lost
# updates, checked per counter). Prints saves per second, p50/p99 latency over every acknowledged
# increment of every process (an increment's latency includes its conflict retries), conflicts and
# failed increments, and the load average at the end.
#
#   Adapters/PostgreSQL/scripts/load-test.sh [PROCESSES=8] [CONTEXTS=4] [SECONDS=60] [COUNTERS=16]
#
# Starts its own throwaway server with scripts/postgres.sh unless MODELSTORE_POSTGRES_URL is set.
# MODELSTORE_PG_SCRATCH_PATH builds in that directory (for example the release build directory of
# Benchmarks/PostgreSQLBenchmarks, which holds every dependency already) instead of the package's own.
set -euo pipefail
self="$(cd "$(dirname "$0")" && pwd)/$(basename "$0")"
cd "$(dirname "$0")/../../.."
processes="${1:-8}" contexts="${2:-4}" seconds="${3:-60}" counters="${4:-16}"
if [ -z "${MODELSTORE_POSTGRES_URL:-}" ]; then
    exec scripts/postgres.sh run -- "$self" "$@"
fi
scratch=()
if [ -n "${MODELSTORE_PG_SCRATCH_PATH:-}" ]; then scratch=(--scratch-path "$MODELSTORE_PG_SCRATCH_PATH"); fi
swift build -c release --package-path Adapters/PostgreSQL "${scratch[@]}" --product modelstore-pg-worker >&2
worker="$(swift build -c release --package-path Adapters/PostgreSQL "${scratch[@]}" --show-bin-path)/modelstore-pg-worker"
namespace="load_$(date +%s)"
"$worker" setup "$namespace" "$counters"
out="$(mktemp -d)"
echo "load-test: $processes processes x $contexts contexts, $counters counters, $seconds s, release build" >&2
start=$(date +%s.%N)
for i in $(seq 1 "$processes"); do
    MODELSTORE_PG_WORKER_LATENCIES="$out/$i.latencies" \
        "$worker" "$namespace" 1000000 "$counters" "$seconds" "$contexts" >"$out/$i.txt" &
done
wait
end=$(date +%s.%N)
psql -At -F ' ' -c "SELECT name, value FROM \"$namespace\".\"Counter\"" >"$out/stored.txt"
load="$(cut -d' ' -f1-3 /proc/loadavg)"
status=0
python3 - "$out" "$start" "$end" "$counters" "$load" <<'PY' || status=$?
import pathlib, sys
out, start, end, counters, load = pathlib.Path(sys.argv[1]), float(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
reports = sorted(out.glob("*.txt"))
fields = [dict(item.split("=", 1) for item in path.read_text().split()) for path in reports if path.name != "stored.txt"]
acknowledged = sum(int(f["acknowledged"]) for f in fields)
conflicts = sum(int(f["conflicts"]) for f in fields)
failed = sum(int(f.get("failed", 0)) for f in fields)
per_counter = [0] * counters
for f in fields:
    for index, count in enumerate(f["perCounter"].split(",")):
        per_counter[index] += int(count)
stored = {}
for line in (out / "stored.txt").read_text().split("\n"):
    if line.strip():
        name, value = line.split(" ")
        stored[name] = int(value)
latencies = sorted(int(line) for path in out.glob("*.latencies") for line in path.read_text().split())
def percentile(p):
    return latencies[min(len(latencies) - 1, int(len(latencies) * p))] if latencies else 0
elapsed = end - start
lost = sum(per_counter[i] - stored.get(f"c{i}", 0) for i in range(counters))
mismatched = [i for i in range(counters) if stored.get(f"c{i}", 0) != per_counter[i]]
print(f"processes={len(fields)} elapsed_s={elapsed:.1f} acknowledged={acknowledged} stored={sum(stored.values())} "
      f"conflicts={conflicts} failed={failed} load_average={load.replace(' ', ',')}")
print(f"saves/s={acknowledged / elapsed:.0f} p50_ms={percentile(0.50) / 1000:.2f} p99_ms={percentile(0.99) / 1000:.2f} "
      f"max_ms={(latencies[-1] if latencies else 0) / 1000:.2f} (over all {len(latencies)} acknowledged increments)")
print(f"lost updates={lost} counters that differ from their acknowledged increments={len(mismatched)}")
sys.exit(0 if not mismatched and len(latencies) == acknowledged else 1)
PY
rm -rf "$out"
if [ "$status" -ne 0 ]; then
    echo "load-test: FAILED: a worker failed, or the stored counters differ from the acknowledged increments" >&2
    exit "$status"
fi
echo "lost updates: none (every stored counter equals its acknowledged increments)"
