#!/usr/bin/env bash
# Runs the tests under the sanitizers and counts their reports.
#
#   scripts/sanitize.sh [thread|address|all] [FILTER]      (default: all)
#
# thread:  `swift test --sanitize=thread` over the concurrency tests (many contexts and actors on
#          one container, saves from many tasks at once, group commit, compaction beside saves, the
#          conformance suite's concurrent cases), with -DMODELSTORE_THREAD_SANITIZER so that
#          ModelStore's lock type (LockedValue) is a pthread mutex the sanitizer understands.
# address: `swift test --sanitize=address` over the whole suite.
#
# Each build has its own scratch directory (.build-sanitize/thread, .build-sanitize/address), so
# the normal build stays warm. Logs go to .build-sanitize/<kind>.log. Exits non-zero if any test
# fails or the sanitizer reports anything.
set -uo pipefail
cd "$(dirname "$0")/.."

kind="${1:-all}"
concurrency="ConcurrencyTests|AppendLogDurabilityTests|AppendLogCompactionTests|TwoProcessTests|ConformanceTests"
filter="${2:-}"
root=".build-sanitize"
mkdir -p "$root"
status=0

run() {
    local name="$1" flags="$2" tests="$3" pattern="$4"
    local log="$root/$name.log"
    local started=$SECONDS
    echo "sanitize: $name sanitizer, tests matching '${tests:-everything}' (log: $log)"
    # shellcheck disable=SC2086
    TSAN_OPTIONS="halt_on_error=0 second_deadlock_stack=1" ASAN_OPTIONS="halt_on_error=0 detect_leaks=0" \
        swift test --scratch-path "$root/$name" --sanitize="$name" $flags ${tests:+--filter "$tests"} >"$log" 2>&1
    local result=$?
    local reports
    reports=$(grep -c "$pattern" "$log")
    local summary
    summary=$(grep -E "Test run with [0-9]+ tests" "$log" | tail -1)
    echo "sanitize: $name: ${summary:-no test summary} exit $result, $reports sanitizer reports, $((SECONDS - started)) s"
    if [ "$reports" -gt 0 ]; then
        grep -A12 "$pattern" "$log" | grep -E "^ +#[0-9]+ .* (ModelStore|Tests|Sample)" | sed 's/ (.*//' | sort | uniq -c \
            | sort -rn | head -20
        status=1
    fi
    [ "$result" -eq 0 ] || status=1
}

if [ "$kind" = thread ] || [ "$kind" = all ]; then
    run thread "-Xswiftc -DMODELSTORE_THREAD_SANITIZER" "${filter:-$concurrency}" "WARNING: ThreadSanitizer"
fi
if [ "$kind" = address ] || [ "$kind" = all ]; then
    run address "" "$filter" "ERROR: AddressSanitizer"
fi
exit $status
