#!/usr/bin/env bash
# Fuzzes with libFuzzer: the JSON scanner and document decoder (json), the append log's record
# decoder, segment scanner, checkpoint reader and manifest parser (log), and store URL parsing (url).
#
#   scripts/fuzz.sh [SECONDS-PER-TARGET] [TARGET...]      (default: 60 s; json log url)
#
# Builds ModelStoreFuzz with -sanitize=fuzzer (and the address sanitizer) in .build-fuzz, seeds
# each target's corpus with Tests/FuzzCorpus/<target>/ (the committed interesting inputs), runs it
# for the time given, and keeps the corpus it grew in .build-fuzz/corpus/<target>/. A crash or trap
# leaves crash-* files in .build-fuzz/findings/<target>/: copy them into Tests/FuzzCorpus/<target>/
# once fixed, and the regression test (FuzzRegressionTests) replays them forever.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-60}"
shift || true
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(json log url)
root=".build-fuzz"
mkdir -p "$root"

swift build --product ModelStoreFuzz --scratch-path "$root/build" \
    -Xswiftc -sanitize=fuzzer,address -Xswiftc -DMODELSTORE_FUZZING >"$root/build.log" 2>&1 \
    || { tail -30 "$root/build.log"; exit 1; }
binary="$(swift build --product ModelStoreFuzz --scratch-path "$root/build" --show-bin-path)/ModelStoreFuzz"

status=0
for target in "${targets[@]}"; do
    corpus="$root/corpus/$target"
    findings="$root/findings/$target"
    mkdir -p "$corpus" "$findings"
    seeds="Tests/FuzzCorpus/$target"
    started=$SECONDS
    set +e
    MODELSTORE_FUZZ_TARGET="$target" "$binary" "$corpus" "$seeds" -max_total_time="$seconds" \
        -artifact_prefix="$findings/" -max_len=65536 -timeout=10 -print_final_stats=1 >"$root/$target.log" 2>&1
    result=$?
    set -e
    runs=$(grep -Eo "stat::number_of_executed_units: *[0-9]+" "$root/$target.log" | grep -Eo "[0-9]+$" || echo "?")
    echo "fuzz $target: $((SECONDS - started)) s, $runs inputs, corpus $(ls "$corpus" | wc -l) files," \
        "findings $(ls "$findings" | wc -l), exit $result"
    [ "$result" -eq 0 ] || { status=1; grep -E "ERROR|Fatal|panic|SUMMARY" "$root/$target.log" | head -5; }
done
exit $status
