#!/usr/bin/env bash
# Mutation-tests the conformance suite: runs it against every generated broken store (mutant) of
# Tests/ModelStoreConformanceTests/Mutants and prints the mutation score, each mutant's verdict with
# the failure that killed it, and every survivor with the reason it is acceptable.
#
#   scripts/mutation-test.sh                              # every mutant, until each is killed
#   scripts/mutation-test.sh ignoresOffset,dropsUpdates   # some, by name (Mutation's cases)
#   scripts/mutation-test.sh --every-case [names]         # also run every case of every mutant, proving
#                                                         # the suite never traps on a wrong answer (minutes)
#
# `swift test` runs the kill test with every mutant; this script runs it alone, and more on demand.
set -euo pipefail
cd "$(dirname "$0")/.."
filter='MutationTests/suiteKillsTheMutants'
if [ "${1:-}" = "--every-case" ]; then
    export MODELSTORE_EVERY_CASE=1
    filter="$filter|MutantsNeverTrapTheSuite"
    shift
fi
if [ $# -gt 0 ]; then export MODELSTORE_MUTANTS="$1"; fi
swift build --build-tests
swift test --skip-build --filter "$filter"
