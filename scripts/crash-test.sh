#!/usr/bin/env bash
# The crash test: a writer saves multi-model transactions (inserts with relationships, updates,
# deletes, cascading deletes; 1 to 40 models each) and acknowledges each, on a synced line of a
# side file, once save() returned; it is killed with SIGKILL at a random instant (while opening,
# saving, or compacting an append log); a checker reopens the store and compares everything it
# holds with the state after the transactions it holds. Trials follow each other on one store.
#
#   scripts/crash-test.sh STORE-URL TRIALS [MAX-KILL-DELAY-MS] [migrate]
#   scripts/crash-test.sh log:/tmp/crash-log?durability=batched 200
#   scripts/crash-test.sh json:/tmp/crash.json 50
#   scripts/crash-test.sh sqlite:/tmp/crash.sqlite 50 600 migrate
#
# With `migrate`, each trial starts a new store: the writer saves and is killed as above, the
# store is checked, then `modelstore-crash migrate` opens it with schema version 2.0.0 and a plan
# whose custom stage fills a new attribute, and is killed at a random instant; the checker then
# requires the old store (1.0.0, as checked) or the wholly migrated one (2.0.0, every custom-stage
# value set, every renamed value kept), never a mix; and a second, uninterrupted open with the plan
# must then leave the store wholly migrated with nothing lost.
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
mode="${4:-write}"
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

clear_store() {
    rm -rf "$path" "$path.backup" "$path.lock" "$path.external" "$path.tmp" "$path-wal" "$path-shm" "$path-journal" \
        "$acknowledgements"
}
# Runs `$@` in the background and kills it with SIGKILL after a random delay of $1 to $1 + $2 ms.
kill_after() {
    local floor=$1 limit=$2
    shift 2
    "$@" 2>>"$work/writer.log" &
    local pid=$!
    local delay=$((RANDOM % limit + floor))
    sleep "$(printf '%d.%03d' $((delay / 1000)) $((delay % 1000)))" 2>/dev/null || sleep 1
    kill -9 "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
}
clear_store
lost=0 partial=0 failed_opens=0 failures=0 migrated=0 acknowledged_earlier=0
started=$SECONDS
for trial in $(seq 1 "$trials"); do
    if [ "$mode" = migrate ]; then
        # The last trial's count: none when its writer was killed before it acknowledged anything (the
        # file missing, or empty if the kill came between creating it and the first write).
        last_count="$(tail -1 "$acknowledgements" 2>/dev/null || true)"
        [[ "$last_count" =~ ^[0-9]+$ ]] || last_count=0
        acknowledged_earlier=$((acknowledged_earlier + last_count))
        clear_store
        kill_after 100 400 "$binary" write "$url" "$acknowledgements" "$compact"
        if ! result="$("$binary" check "$url" "$acknowledgements")"; then
            failures=$((failures + 1))
            kept="$work/failed-$trial"
            rm -rf "$kept" && mkdir -p "$kept"
            cp -R "$path"* "$kept/" 2>/dev/null || true
            echo "trial $trial: before migrating: $result (store kept in $kept)"
            continue
        fi
        kill_after 1 "$max_delay" "$binary" migrate "$url"
        [ "$("$binary" version "$url" 2>/dev/null)" = 2.0.0 ] && migrated=$((migrated + 1))
    else
        kill_after 20 "$max_delay" "$binary" write "$url" "$acknowledgements" "$compact"
    fi
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
    elif [ "$mode" = migrate ]; then
        # Opening again with the plan finishes what the killed migration began.
        if ! "$binary" migrate "$url" 2>>"$work/writer.log" \
            || ! result="$("$binary" check "$url" "$acknowledgements")" \
            || [ "$("$binary" version "$url" 2>/dev/null)" != 2.0.0 ]; then
            failures=$((failures + 1))
            echo "trial $trial: migrating again after the kill: ${result:-the open failed}"
        fi
    fi
done
last_count="$(tail -1 "$acknowledgements" 2>/dev/null || true)"
[[ "$last_count" =~ ^[0-9]+$ ]] || last_count=0
acknowledged=$((acknowledged_earlier + last_count))
summary="crash-test $url: $trials trials, $acknowledged transactions acknowledged, lost acknowledged $lost,"
summary+=" partial $partial, failed opens $failed_opens"
[ "$mode" = migrate ] && summary+=", $migrated found migrated and $((trials - migrated)) at the old version"
echo "$summary, $((SECONDS - started)) s"
rm -f "$acknowledgements"
[ "$failures" -eq 0 ]
