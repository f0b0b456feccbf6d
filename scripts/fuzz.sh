#!/usr/bin/env bash
# Fuzzes with libFuzzer: the JSON scanner and document decoder (json), the append log's record
# decoder, segment scanner, checkpoint reader and manifest parser (log), store URL parsing (url), and
# the predicate translator fed generated predicate trees, checked against Swift's own evaluation on an
# in-memory and a SQLite store (predicate).
#
#   scripts/fuzz.sh [SECONDS-PER-TARGET] [TARGET...]      (default: 60 s; json log url predicate)
#
# Builds ModelStoreFuzz with libFuzzer's coverage and the address sanitizer in .build-fuzz, seeds
# each target's corpus with Tests/FuzzCorpus/<target>/ (the committed interesting inputs), runs it
# for the time given, and keeps the corpus it grew in .build-fuzz/corpus/<target>/. A crash or trap
# leaves crash-* files in .build-fuzz/findings/<target>/: copy them into Tests/FuzzCorpus/<target>/
# once fixed, and the regression test (FuzzRegressionTests) replays them forever.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-60}"
shift || true
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(json log url predicate)
root=".build-fuzz"
mkdir -p "$root"

# SwiftPM gives an executable its own entry point, so libFuzzer's `main` cannot be used: the
# target is instrumented for coverage and calls libFuzzer's driver from its own `main`, linking
# the toolchain's libFuzzer without its `main`.
swift_bin="$(dirname "$(readlink -f "$(command -v swift)")")"
libfuzzer="$(ls "$swift_bin"/../lib/swift/clang/lib/linux/libclang_rt.fuzzer_no_main-*.a 2>/dev/null | head -1)"
[ -n "$libfuzzer" ] || { echo "fuzz: the toolchain has no libclang_rt.fuzzer_no_main" >&2; exit 1; }
swift build --product ModelStoreFuzz --scratch-path "$root/build" \
    -Xswiftc -sanitize=address -Xswiftc -sanitize-coverage=edge,trace-cmp,inline-8bit-counters,pc-table \
    -Xswiftc -DMODELSTORE_FUZZING -Xlinker "$libfuzzer" -Xlinker -lstdc++ >"$root/build.log" 2>&1 \
    || { grep -E "error" "$root/build.log" | head -20; exit 1; }
binary="$(swift build --product ModelStoreFuzz --scratch-path "$root/build" --show-bin-path)/ModelStoreFuzz"

status=0
for target in "${targets[@]}"; do
    corpus="$root/corpus/$target"
    findings="$root/findings/$target"
    mkdir -p "$corpus" "$findings"
    seeds="Tests/FuzzCorpus/$target"
    started=$SECONDS
    set +e
    # Leak reports are off: the Swift runtime's metadata caches are reported as leaks.
    ASAN_OPTIONS="detect_leaks=0" MODELSTORE_FUZZ_TARGET="$target" "$binary" "$corpus" "$seeds" \
        -max_total_time="$seconds" -detect_leaks=0 \
        -artifact_prefix="$findings/" -max_len=65536 -timeout=10 -print_final_stats=1 >"$root/$target.log" 2>&1
    result=$?
    set -e
    runs=$(grep -Eo "stat::number_of_executed_units: *[0-9]+" "$root/$target.log" | tail -1 | grep -Eo "[0-9]+$" || echo "?")
    echo "fuzz $target: $((SECONDS - started)) s, $runs inputs, corpus $(ls "$corpus" | wc -l) files," \
        "findings $(ls "$findings" | wc -l), exit $result"
    [ "$result" -eq 0 ] || { status=1; grep -E "ERROR|Fatal|panic|SUMMARY" "$root/$target.log" | head -5; }
done
exit $status
