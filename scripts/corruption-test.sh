#!/usr/bin/env bash
# The corruption test, long: every file of a JSON store, of an append log (manifest, checkpoint,
# live and history segments, synced mark, lock, backup) and of an SQLite store (the database alone,
# and the database with its write-ahead log) damaged ROUNDS times in each way (truncation, empty
# file, bit flip, flip of a used byte, garbage range, zeroed range, appended garbage, deep nesting).
# Each opening (and, for SQLite, reading every model) must give a typed error naming the file and
# leave every file unchanged, or open exactly what was saved (or what RELIABILITY.md lists as
# allowed: an append log's reported torn tail, an SQLite log cut at its end); never crash, hang or
# open other data. The test suite runs the same with 2 rounds. Per-damage outcomes are printed as
# 'corruption:' lines in the log.
#
#   scripts/corruption-test.sh [ROUNDS] [SEED]      (default: 200 rounds, seed 1)
set -euo pipefail
cd "$(dirname "$0")/.."
rounds="${1:-200}"
seed="${2:-1}"
started=$SECONDS
mkdir -p .build-corruption
log=".build-corruption/test.log"
set +e
MODELSTORE_CORRUPTION_ROUNDS="$rounds" MODELSTORE_CORRUPTION_SEED="$seed" \
    swift test --filter CorruptionTests >"$log" 2>&1
status=$?
set -e
grep -E "✘|Test run with|error:|^corruption: [A-Za-z]*: [0-9]" "$log" | cut -c1-400 | head -40
echo "corruption-test: $rounds rounds per file and damage, seed $seed, $((SECONDS - started)) s, exit $status"
exit "$status"
