#!/usr/bin/env bash
# The long run of the PostgreSQL store's randomized group-commit test: many seeds, each six threads
# of saves meeting in commit groups, checked against the threads' oracles (a failing seed is shrunk
# and printed with the line that runs it again). With --load, three busy loops run beside it, so
# that saves meet in other orders and the groups are larger.
# Usage: scripts/group-commit-random.sh [--load] [RUNS] [FIRST-SEED]
#   (defaults: 200 runs from a random first seed; PostgreSQL comes from scripts/postgres.sh)
set -euo pipefail
cd "$(dirname "$0")/.."
load=0
if [ "${1:-}" = "--load" ]; then load=1; shift; fi
runs="${1:-200}"
seed="${2:-$(od -An -N8 -tu8 /dev/urandom | tr -d ' ')}"
swift build --package-path Adapters/PostgreSQL --build-tests
busy=()
stop_busy() { for pid in "${busy[@]}"; do kill "$pid" 2>/dev/null || true; done; }
trap stop_busy EXIT
if [ "$load" = 1 ]; then
    for _ in 1 2 3; do (while :; do :; done) & busy+=($!); done
fi
echo "group-commit-random: $runs runs from seed $seed (load: $load)"
MODELSTORE_GROUP_RUNS="$runs" MODELSTORE_GROUP_SEED="$seed" \
    scripts/postgres.sh run -- swift test --package-path Adapters/PostgreSQL --skip-build \
    --filter randomizedConcurrentSavesMatchWhatEachThreadWasAcknowledged
