#!/usr/bin/env bash
# CI for encryption at rest: the crash test (scripts/crash-test.sh) on an encrypted append log, an
# encrypted JSON file and an encrypted SQLite database (page cipher), with a random key from the
# environment: writers SIGKILLed at random instants (while saving, or compacting the log), then every
# acknowledged transaction must be there, whole, and the store must reopen with its key. Then
# `modelstore encrypt`, `rekey` and `decrypt` on an SQLite store made by the trips sample, checking
# that nothing of it shows in the encrypted file, that the old key stops working, and that every
# model is still there. About 140 s on the shared 2-core machine under load.
set -euo pipefail
cd "$(dirname "$0")/.."
MODELSTORE_CI_STORE_KEY="$(openssl rand -hex 32)"
export MODELSTORE_CI_STORE_KEY
crash_dir="$(mktemp -d)"
trap 'rm -rf "$crash_dir"' EXIT
for url in "log:$crash_dir/encrypted-log?durability=batched&key-env=MODELSTORE_CI_STORE_KEY" \
    "json:$crash_dir/encrypted.json?key-env=MODELSTORE_CI_STORE_KEY" \
    "sqlite:$crash_dir/encrypted.sqlite?key-env=MODELSTORE_CI_STORE_KEY"; do
    scripts/crash-test.sh "$url" 20
done

# encrypt, rekey and decrypt an SQLite store with the tool.
swift build --product modelstore >/dev/null
swift build --product trips >/dev/null
bin="$(swift build --show-bin-path)"
MODELSTORE_CI_NEW_KEY="$(openssl rand -hex 32)"
export MODELSTORE_CI_NEW_KEY
store="$crash_dir/trips.sqlite"
"$bin/trips" --store "sqlite:$store" >/dev/null
expected="$("$bin/modelstore" verify "sqlite:$store")"
"$bin/modelstore" encrypt "sqlite:$store" --key-env MODELSTORE_CI_STORE_KEY
if grep -q -e 'Rome' -e 'SQLite format 3' "$store"; then
    echo "ci-data-at-rest: the encrypted SQLite store shows its contents" >&2
    exit 1
fi
"$bin/modelstore" verify "sqlite:$store?key-env=MODELSTORE_CI_STORE_KEY"
if "$bin/modelstore" verify "sqlite:$store" 2>/dev/null; then
    echo "ci-data-at-rest: the encrypted SQLite store opened without its key" >&2
    exit 1
fi
"$bin/modelstore" rekey "sqlite:$store?key-env=MODELSTORE_CI_STORE_KEY" --key-env MODELSTORE_CI_NEW_KEY
if "$bin/modelstore" verify "sqlite:$store?key-env=MODELSTORE_CI_STORE_KEY" 2>/dev/null; then
    echo "ci-data-at-rest: the old key still opens the rekeyed SQLite store" >&2
    exit 1
fi
"$bin/modelstore" decrypt "sqlite:$store?key-env=MODELSTORE_CI_NEW_KEY"
actual="$("$bin/modelstore" verify "sqlite:$store")"
if [ "$actual" != "$expected" ]; then
    echo "ci-data-at-rest: after encrypt, rekey and decrypt: '$actual', expected '$expected'" >&2
    exit 1
fi
echo "ci-data-at-rest: SQLite encrypt, rekey and decrypt: $actual"
