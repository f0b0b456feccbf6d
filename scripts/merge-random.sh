#!/usr/bin/env bash
# The long run of the randomized merge test: seeded interleavings of reads, edits and saves from
# three contexts (mergeByProperty, storeTrumps, error) on one store, with a live query, checked
# step by step against a plain model. A failure is shrunk to a short list of steps and printed.
#
#   scripts/merge-random.sh [SEEDS]     (default: 2,000 seeds of 60 steps)
set -euo pipefail
cd "$(dirname "$0")/.."
export MODELSTORE_MERGE_SEEDS="${1:-2000}"
swift build --build-tests
swift test --skip-build --filter MergeRandomizedTests
