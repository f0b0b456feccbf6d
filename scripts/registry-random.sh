#!/usr/bin/env bash
# The long run of the context registry's randomized test: seeded runs of inserts, deletes, edits,
# saves, resets, fetches and look-ups by temporary and permanent identifiers, checked against a plain
# model of which object the context must hand out. A failure is shrunk and printed.
#
#   scripts/registry-random.sh [SEEDS]     (default: 2000 seeds)
set -euo pipefail
cd "$(dirname "$0")/.."
export MODELSTORE_REGISTRY_SEEDS="${1:-2000}"
swift build --build-tests
# The test's status is the script's.
swift test --skip-build --filter ContextRegistryRandomizedTests
