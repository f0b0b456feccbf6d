#!/usr/bin/env bash
# The long run of the randomized table test: seeded sequences of saves, batch inserts, updates,
# deletes, reloads in random order and queries through every access path, run on SnapshotTable and
# checked against a plain array of Swift structs (SnapshotTableModelTests). A failure is shrunk to
# the fewest steps that still fail and printed, to paste into knownSequencesAgree.
#
#   scripts/table-random.sh [SEEDS] [STEPS]     (defaults: 2000 seeds of 300 steps)
set -euo pipefail
cd "$(dirname "$0")/.."
export MODELSTORE_TABLE_SEEDS="${1:-2000}"
export MODELSTORE_TABLE_STEPS="${2:-300}"
swift build --build-tests
log="$(mktemp)"
trap 'rm -f "$log"' EXIT
# The test's own status decides the script's: a failing seed fails the run.
status=0
swift test --skip-build --filter SnapshotTableModelTests/moreSeedsAgreeWithThePlainModel >"$log" 2>&1 || status=$?
grep -E "^table model:|seed [0-9]+:|shrunk to|Test run" "$log" || true
# A crash prints no summary: show the end of the output.
if [ "$status" -ne 0 ]; then tail -n 40 "$log"; fi
exit "$status"
