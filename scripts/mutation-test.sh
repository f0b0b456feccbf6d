#!/usr/bin/env bash
# Mutation-tests the conformance suite: runs it against every generated broken store (mutant) of
# Tests/ModelStoreConformanceTests/Mutants and prints the mutation score, each mutant's verdict with
# the failure that killed it, and every survivor with the reason it is acceptable.
#
#   scripts/mutation-test.sh                      # every mutant
#   scripts/mutation-test.sh ignoresOffset,dropsUpdates   # some, by name (Mutation's cases)
#
# `swift test` runs the same test with every mutant; this script runs it alone, and a subset on demand.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ $# -gt 0 ]; then export MODELSTORE_MUTANTS="$1"; fi
swift build --build-tests
swift test --skip-build --filter 'MutationTests/suiteKillsTheMutants'
