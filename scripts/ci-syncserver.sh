#!/usr/bin/env bash
# The sync server (the SyncServer/ package): the house format, doc comments, the build, then its
# request decoder's fuzz target for 20 s (seeded mutations), then its tests against a throwaway
# PostgreSQL 15 (scripts/postgres.sh): two real server processes on
# loopback, clients syncing through them, token, scope and input refusals, HTTPS with a self-signed
# certificate (curl, and the sync client in a mount namespace that trusts it), and (where the machine
# lets it create network namespaces, as root can) clients in a namespace of their own whose link is
# throttled and cut mid-push and mid-pull. Then `modelstore sync` against a running server.
set -euo pipefail
cd "$(dirname "$0")/.."
started=$SECONDS
# The HTTPS tests make a certificate with openssl and fetch with curl.
missing=""
for tool in openssl curl; do command -v "$tool" >/dev/null || missing="$missing $tool"; done
if [ -n "$missing" ]; then
    sudo=""
    [ "$(id -u)" -ne 0 ] && sudo="sudo"
    $sudo apt-get update -q
    # shellcheck disable=SC2086 # the list is meant to split
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q $missing
fi
swift format lint --strict -r --parallel SyncServer/Sources SyncServer/Tests SyncServer/Package.swift
python3 scripts/check-docs.py SyncServer/Sources
# The PostgreSQL adapter's build directory, where .ci/run's earlier steps built SwiftNIO, swift-crypto,
# PostgresNIO, Hummingbird and ModelStore in debug with the same versions and flags: only jwt-kit (with
# swift-certificates) and this package compile here.
scratch=Adapters/PostgreSQL/.build
swift build --package-path SyncServer --scratch-path "$scratch" --build-tests
bin="$(swift build --package-path SyncServer --scratch-path "$scratch" --show-bin-path)"
# The request decoder's fuzz target: the committed inputs replayed, then the seeded mutation runner
# for 20 s from a seed it prints (a crash leaves the input in $fuzz/findings/last-input, shown below).
# scripts/fuzz-syncserver.sh runs the same target under libFuzzer, in an instrumented build of its own.
fuzz="$(mktemp -d)"
cp -r Tests/FuzzCorpus/sync-requests "$fuzz/corpus"
"$bin/modelstore-sync-fuzz" replay Tests/FuzzCorpus/sync-requests/*
"$bin/modelstore-sync-fuzz" mutate "$fuzz/corpus" "$fuzz/findings" --seconds 20 --seed "$(date +%s)" || {
    echo "ci-syncserver: the fuzz target failed on this input (hex):"
    od -An -tx1 "$fuzz/findings/last-input" | head -20
    exit 1
}
rm -rf "$fuzz"
MODELSTORE_POSTGRES_REQUIRED=1 scripts/postgres.sh run -- \
    swift test --package-path SyncServer --scratch-path "$scratch" --skip-build
# The command-line client against a real server: a new JSON store created from the server's schema.
swift build --product modelstore
MODELSTORE_SYNC_BIN="$bin" MODELSTORE_TOOL="$(swift build --show-bin-path)/modelstore" \
    scripts/postgres.sh run -- scripts/syncserver-cli-test.sh
echo "ci-syncserver: passed in $((SECONDS - started)) s"
