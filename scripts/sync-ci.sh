#!/usr/bin/env bash
# CI for sync beyond `swift test` (which runs the short sync crash test and the randomized run) and the
# PostgreSQL package's tests (which run sync over a PostgreSQL shared store):
# - the sync crash test: three replica processes SIGKILLed and restarted 25 times, then the last
#   clean round and its checks (scripts/sync-crash-test.sh);
# - the sync benchmarks at the smoke size, SQLite to SQLite and SQLite to PostgreSQL, in debug (every
#   result checked; the timings of a debug build are not to be quoted), sharing the PostgreSQL
#   adapter's build directory as the PostgreSQL benchmarks' CI step does; then its usage text, which
#   fits an 80-column terminal, and its refusal of a flag it does not know.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/sync-crash-test.sh 25 700
scripts/postgres.sh run -- swift run --package-path Benchmarks/PostgreSQLBenchmarks \
    --scratch-path Adapters/PostgreSQL/.build modelstore-sync-bench --smoke
bench=(swift run --skip-build --package-path Benchmarks/PostgreSQLBenchmarks --scratch-path Adapters/PostgreSQL/.build
    modelstore-sync-bench)
"${bench[@]}" --help | awk 'length > 80 { print "over 80 columns: " $0; wide = 1 } END { exit wide }'
status=0
"${bench[@]}" --size 10 2>/dev/null || status=$?
if [ "$status" -ne 64 ]; then
    echo "sync-ci: modelstore-sync-bench --size 10 (a misspelt --sizes) exited $status, not 64 (usage)"
    exit 1
fi
