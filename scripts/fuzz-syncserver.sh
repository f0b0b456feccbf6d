#!/usr/bin/env bash
# Fuzzes the sync server's request decoder (SyncServer/Sources/modelstore-sync-fuzz) with libFuzzer:
# each input is a path (first byte) and a request body, read and checked as the server does; a
# refusal other than a short 4xx without control characters, an escape of another error, or an
# accepted body that fails after a JSON round trip traps.
#
#   scripts/fuzz-syncserver.sh [SECONDS]        (default 60)
#
# Builds the target alone (ModelStore, ModelStoreSync and the decoder: no NIO) with libFuzzer's
# coverage and the address sanitizer in SyncServer/.build-fuzz, seeds the corpus with
# Tests/FuzzCorpus/sync-requests/, and keeps what it grows in SyncServer/.build-fuzz/corpus/. A
# finding lands in SyncServer/.build-fuzz/findings/: once fixed, copy it into the seed directory so
# scripts/ci-syncserver.sh replays it. scripts/ci-syncserver.sh runs the build's seeded mutation
# runner instead (no instrumented build), for a short time.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-60}"
root="SyncServer/.build-fuzz"
mkdir -p "$root/corpus" "$root/findings"
swift_bin="$(dirname "$(readlink -f "$(command -v swift)")")"
libfuzzer="$(ls "$swift_bin"/../lib/swift/clang/lib/linux/libclang_rt.fuzzer_no_main-*.a 2>/dev/null | head -1)"
[ -n "$libfuzzer" ] || { echo "fuzz-syncserver: the toolchain has no libclang_rt.fuzzer_no_main" >&2; exit 1; }
started=$SECONDS
swift build --package-path SyncServer --product modelstore-sync-fuzz --scratch-path "$root/build" \
    -Xswiftc -sanitize=address -Xswiftc -sanitize-coverage=edge,trace-cmp,inline-8bit-counters,pc-table \
    -Xswiftc -DMODELSTORE_FUZZING -Xlinker "$libfuzzer" -Xlinker -lstdc++ >"$root/build.log" 2>&1 \
    || { grep -E "error" "$root/build.log" | head -20; exit 1; }
binary="$(swift build --package-path SyncServer --product modelstore-sync-fuzz --scratch-path "$root/build" \
    --show-bin-path)/modelstore-sync-fuzz"
echo "fuzz-syncserver: built in $((SECONDS - started)) s"
started=$SECONDS
set +e
# Leak reports are off: the Swift runtime's metadata caches are reported as leaks.
ASAN_OPTIONS="detect_leaks=0" "$binary" "$root/corpus" Tests/FuzzCorpus/sync-requests \
    -max_total_time="$seconds" -detect_leaks=0 -artifact_prefix="$root/findings/" -max_len=65536 -timeout=10 \
    -print_final_stats=1 >"$root/fuzz.log" 2>&1
result=$?
set -e
runs=$(grep -Eo "stat::number_of_executed_units: *[0-9]+" "$root/fuzz.log" | tail -1 | grep -Eo "[0-9]+$" || echo "?")
echo "fuzz-syncserver: $((SECONDS - started)) s, $runs inputs, corpus $(ls "$root/corpus" | wc -l) files," \
    "findings $(ls "$root/findings" | wc -l), exit $result"
[ "$result" -eq 0 ] || grep -E "ERROR|Fatal|panic|SUMMARY" "$root/fuzz.log" | head -5
exit $result
