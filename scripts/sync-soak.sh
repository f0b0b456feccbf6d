#!/usr/bin/env bash
# The long run of the randomized sync test: more seeds and longer step sequences than `swift test`
# runs. Usage: scripts/sync-soak.sh [RUNS] [STEPS] [FIRST-SEED]
set -euo pipefail
cd "$(dirname "$0")/.."
MODELSTORE_SYNC_RUNS="${1:-200}" MODELSTORE_SYNC_STEPS="${2:-120}" MODELSTORE_SYNC_SEED="${3:-1}" \
    swift test --filter "SyncRandomizedTests|SyncRelationshipRandomizedTests"
