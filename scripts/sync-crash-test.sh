#!/usr/bin/env bash
# The sync crash test: three replica processes (local stores SQLite, JSON and append log) apply
# their operations (inserts, updates, deletes) and acknowledge each once the local save returned,
# with sync rounds against one shared SQLite store in between; each is killed with SIGKILL at a
# random instant (inside a save, a round, an open, or between them) and restarted, TRIALS times.
# Then `modelstore-sync-crash check` runs the last clean rounds and requires that nothing
# acknowledged is lost or doubled on any replica or in the shared store, that all replicas hold
# what the shared store holds, and that the shared store holds one model per global identifier.
#
#   scripts/sync-crash-test.sh TRIALS [MAX-KILL-DELAY-MS]
#   scripts/sync-crash-test.sh 200 800
#
# A failing run's stores stay in .build-sync-crash/run-PID/. Exits 1 on any failure.
set -euo pipefail
cd "$(dirname "$0")/.."

trials="${1:?usage: scripts/sync-crash-test.sh TRIALS [MAX-KILL-DELAY-MS]}"
max_delay="${2:-800}"
work=".build-sync-crash"
mkdir -p "$work"
run="$work/run-$$"
rm -rf "$run"
mkdir -p "$run"

nice -n 10 swift build --product ModelStoreSyncCrashTest >"$work/build.log" 2>&1 || { cat "$work/build.log"; exit 1; }
binary="$(swift build --product ModelStoreSyncCrashTest --show-bin-path)/ModelStoreSyncCrashTest"

shared="sqlite:$(pwd)/$run/shared.sqlite"
writers=(a b c)
locals=("sqlite:$(pwd)/$run/a.sqlite" "json:$(pwd)/$run/b.json" "log:$(pwd)/$run/c-log")
unexpected=0
started=$SECONDS
for ((trial = 1; trial <= trials; trial++)); do
    pids=()
    for i in 0 1 2; do
        "$binary" work "${writers[$i]}" "${locals[$i]}" "$shared" "$run/${writers[$i]}.ack" 2>>"$run/writers.log" &
        pids+=($!)
    done
    # Each process is killed after its own random delay, so kills land at different steps.
    for i in 0 1 2; do
        delay=$((RANDOM % max_delay + 20))
        sleep "$(printf '%d.%03d' $((delay / 1000)) $((delay % 1000)))"
        kill -9 "${pids[$i]}" 2>/dev/null || true
    done
    for i in 0 1 2; do
        status=0
        { wait "${pids[$i]}"; } 2>/dev/null || status=$?
        # 137: killed as planned. Anything else is the process failing on its own.
        if [ "$status" -ne 137 ]; then
            unexpected=$((unexpected + 1))
            echo "trial $trial: writer ${writers[$i]} exited with status $status before its kill" >&2
        fi
    done
done
members=()
for i in 0 1 2; do members+=("${writers[$i]}=${locals[$i]}=$run/${writers[$i]}.ack"); done
check_status=0
"$binary" check "$shared" "${members[@]}" >"$run/check.log" 2>&1 || check_status=$?
cat "$run/check.log"
rounds_failed=$(grep -c "round failed" "$run/writers.log" || true)
echo "trials $trials seconds $((SECONDS - started)) unexpected-exits $unexpected transient-round-failures $rounds_failed"
if [ "$check_status" -ne 0 ] || [ "$unexpected" -ne 0 ]; then
    echo "sync crash test FAILED; stores and logs kept in $run" >&2
    tail -n 20 "$run/writers.log" >&2 || true
    exit 1
fi
rm -rf "$run"
echo "sync crash test passed"
