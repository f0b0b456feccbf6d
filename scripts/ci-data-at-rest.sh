#!/usr/bin/env bash
# CI for encryption at rest: the crash test (scripts/crash-test.sh) on an encrypted append log and an
# encrypted JSON file, with a random key from the environment: writers SIGKILLed at random instants
# (while saving, or compacting the log), then every acknowledged transaction must be there, whole,
# and the store must reopen with its key. About 70 s on the shared 2-core machine at load ~15.
set -euo pipefail
cd "$(dirname "$0")/.."
MODELSTORE_CI_STORE_KEY="$(openssl rand -hex 32)"
export MODELSTORE_CI_STORE_KEY
crash_dir="$(mktemp -d)"
trap 'rm -rf "$crash_dir"' EXIT
for url in "log:$crash_dir/encrypted-log?durability=batched&key-env=MODELSTORE_CI_STORE_KEY" \
    "json:$crash_dir/encrypted.json?key-env=MODELSTORE_CI_STORE_KEY"; do
    scripts/crash-test.sh "$url" 20
done
