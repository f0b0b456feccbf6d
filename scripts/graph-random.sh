#!/usr/bin/env bash
# The long run of the randomized graph test: seeded sessions of inserts, deletes, relationship
# changes, awkward values (-0.0, NaN, infinities, equivalent spellings), saves, rollbacks, reopens
# and fetches on every store, checked against a plain-Swift oracle. A failure is shrunk and printed
# as Swift steps to paste into GraphRandomizedTests.knownSequencesMatchTheOracle.
#
#   scripts/graph-random.sh [SEEDS] [STEPS]     (defaults: 400 seeds of 300 steps per store)
set -euo pipefail
cd "$(dirname "$0")/.."
export MODELSTORE_GRAPH_SEEDS="${1:-400}"
export MODELSTORE_GRAPH_STEPS="${2:-300}"
swift build --build-tests
# The test's status is the script's: a difference on any store fails the run.
swift test --skip-build --filter GraphRandomizedTests/randomSessionsMatchTheOracle
