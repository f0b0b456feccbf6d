#!/usr/bin/env bash
# CI's crash tests, which .ci/run starts in the background beside its compile-heavy steps (niced, so
# they take the CPU those steps leave idle): 50 writers SIGKILLed at random instants per durable
# store and mode (nothing acknowledged may be lost, no transaction may be partial, every store must
# reopen); the same during migration (the store must be the old one or wholly migrated); then the
# encrypted stores and the tool's encrypt, rekey and decrypt (scripts/ci-data-at-rest.sh). None of
# them measures time, so sharing the machine changes how long they take, not what they check.
# Needs the debug build `swift build` makes. About 5 min alone on the shared 2-core machine.
set -euo pipefail
cd "$(dirname "$0")/.."
started=$SECONDS
crash_dir="$(mktemp -d)"
trap 'rm -rf "$crash_dir"' EXIT
for url in "json:$crash_dir/store.json" "log:$crash_dir/none?durability=none" \
    "log:$crash_dir/batched?durability=batched" "log:$crash_dir/every?durability=everySave" \
    "sqlite:$crash_dir/store.sqlite" "sqlite:$crash_dir/every.sqlite?durability=everySave"; do
    scripts/crash-test.sh "$url" 50
done
for url in "json:$crash_dir/migrate.json" "log:$crash_dir/migrate-log" "sqlite:$crash_dir/migrate.sqlite"; do
    scripts/crash-test.sh "$url" 20 80 migrate
done
echo "ci-crash-tests: plaintext stores passed in $((SECONDS - started)) s"
scripts/ci-data-at-rest.sh
echo "ci-crash-tests: passed in $((SECONDS - started)) s"
