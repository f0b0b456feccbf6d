#!/usr/bin/env bash
# The crash test: a writer saves multi-model transactions (inserts with relationships, updates,
# deletes, cascading deletes; 1 to 40 models each) and acknowledges each, on a synced line of a
# side file, once save() returned; it is killed with SIGKILL at a random instant (while opening,
# saving, or compacting an append log); a checker reopens the store and compares everything it
# holds with the state after the transactions it holds. Trials follow each other on one store.
#
#   scripts/crash-test.sh STORE-URL TRIALS [MAX-KILL-DELAY-MS]
#   scripts/crash-test.sh log:/tmp/crash-log?durability=batched 200
#   scripts/crash-test.sh json:/tmp/crash.json 50
#
# The store at STORE-URL is deleted first. An append log is also compacted every 7 transactions,
# so kills land during compactions too. Reports trials, acknowledged transactions, lost
# acknowledged ones (must be 0), partial transactions (must be 0) and failed opens (must be 0);
# a failing store is copied to .build-crash/failed-<trial>/ for inspection. Exits 1 on any failure.
set -euo pipefail
cd "$(dirname "$0")/.."

url="${1:?usage: scripts/crash-test.sh STORE-URL TRIALS [MAX-KILL-DELAY-MS]}"
trials="${2:?usage: scripts/crash-test.sh STORE-URL TRIALS [MAX-KILL-DELAY-MS]}"
max_delay="${3:-600}"
scheme="${url%%:*}"
path="${url#*:}"
path="${path%%\?*}"
work=".build-crash"
mkdir -p "$work"
acknowledgements="$work/acknowledged-$$"
compact=0
[ "$scheme" = log ] && compact=7

swift build --product ModelStoreCrashTest >"$work/build.log" 2>&1 || { cat "$work/build.log"; exit 1; }
binary="$(swift build --product ModelStoreCrashTest --show-bin-path)/ModelStoreCrashTest"

rm -rf "$path" "$path.backup" "$path.lock" "$path.external" "$path.tmp" "$path-wal" "$path-shm" "$acknowledgements"
lost=0 partial=0 failed_opens=0 failures=0
started=$SECONDS
for trial in $(seq 1 "$trials"); do
    "$binary" write "$url" "$acknowledgements" "$compact" 2>>"$work/writer.log" &
    writer=$!
    delay=$((RANDOM % max_delay + 20))
    sleep "$(printf '0.%03d' "$delay")" 2>/dev/null || sleep 1
    kill -9 "$writer" 2>/dev/null || true
    wait "$writer" 2>/dev/null || true
    set +e
    result="$("$binary" check "$url" "$acknowledgements")"
    status=$?
    set -e
    line="$(echo "$result" | head -1)"
    case $status in
        0) ;;
        3) failed_opens=$((failed_opens + 1)) ;;
        *)
            [[ "$line" =~ lost\ ([0-9]+) ]] && lost=$((lost + BASH_REMATCH[1]))
            [[ "$line" =~ partial\ ([0-9]+) ]] && partial=$((partial + BASH_REMATCH[1]))
            ;;
    esac
    if [ $status -ne 0 ]; then
        failures=$((failures + 1))
        kept="$work/failed-$trial"
        rm -rf "$kept" && mkdir -p "$kept"
        cp -R "$path"* "$kept/" 2>/dev/null || true
        cp "$acknowledgements" "$kept/acknowledged"
        echo "trial $trial: $result (store kept in $kept)"
    fi
done
acknowledged="$(tail -1 "$acknowledgements" 2>/dev/null || echo 0)"
echo "crash-test $url: $trials trials, $acknowledged transactions acknowledged, lost acknowledged $lost," \
    "partial $partial, failed opens $failed_opens, $((SECONDS - started)) s"
rm -f "$acknowledgements"
[ "$failures" -eq 0 ]
