#!/usr/bin/env bash
# Runs the tests under the sanitizers and counts their reports.
#
#   scripts/sanitize.sh [thread|address|all] [FILTER]      (default: all)
#
# thread:  `swift test --sanitize=thread` over the concurrency tests, with
#          -DMODELSTORE_THREAD_SANITIZER so that ModelStore's lock type (LockedValue) is a pthread
#          mutex the sanitizer understands. CI runs it (.ci/run).
# address: `swift test --sanitize=address` over the whole suite.
#
# Each build has its own scratch directory (.build-sanitize/thread, .build-sanitize/address), so
# the normal build stays warm. Logs go to .build-sanitize/<kind>.log. Exits non-zero if any test
# fails or the sanitizer reports anything.
set -uo pipefail
cd "$(dirname "$0")/.."

kind="${1:-all}"
# The concurrency tests. A filter is matched against "Module.Suite/test()/File.swift:line:column".
#   ConcurrencyTests           many contexts and a model actor on one container, saves from many
#                              tasks at once, LockedValue across threads (with the rest of
#                              ObservationAndConcurrencyTests.swift: observation, several stores)
#   ContextAsyncTests          the context's async entry points awaiting a store across threads
#   AppendLogDurabilityTests   group commit: saves from many threads sharing one sync
#   AppendLogCompactionTests   compactions beside saves from other threads
#   TwoProcessTests            two processes writing one JSON file under its lock (the second is
#                              this test binary run again, so it is instrumented too)
#   PersistentIdentifierScopeTests  identifier scopes made from many tasks at once (the table of
#                              scopes and its slots of recent ones)
#   …ConformanceTests/         the conformance suites of the in-memory store, the sample adapter
#                              (entity files), the JSON file, the append log, SQLite and encrypted
#                              SQLite: cases run in parallel, one saves from 4 threads. Encrypted SQLite for its
#                              cipher VFS, process-wide C state; not the encrypted JSON file and
#                              append log, whose code beside their plaintext twins' is the sealing
#                              of records, which the AES-256-GCM tests below run across threads
#                              (their suites took 58 s of the 236 s the eight suites take here)
#   AES256GCMTests, AES256GCMNonceTests  sealing and opening from many threads, and the nonces
# Not the conformance harness's own tests (the mutants, MutationTests): they check that the
# suite catches broken stores, not how ModelStore behaves across threads, and take much longer.
concurrency="ConcurrencyTests|ContextAsyncTests|AppendLogDurabilityTests|AppendLogCompactionTests|TwoProcessTests"
concurrency+="|PersistentIdentifierScopeTests"
concurrency+="|InMemoryStoreConformanceTests/|EntityFilesConformanceTests/|SQLiteConformanceTests/"
concurrency+="|\\.JSONFileConformanceTests/|\\.AppendLogConformanceTests/"
concurrency+="|AES256GCMTests/|AES256GCMNonceTests/"
# The test targets that hold them: the thread sanitizer's build leaves the others out (Package.swift reads
# MODELSTORE_TEST_TARGETS), unless a FILTER of one's own is given.
concurrency_targets="ModelStoreTests,ModelStoreAppendLogTests,ModelStoreJSONFileTests,ModelStoreConformanceTests"
concurrency_targets+=",ModelStoreSQLiteTests,ModelStoreCryptoTests,CustomAdapterSampleTests"
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
    summary=$(grep -E "Test run with [0-9]+ tests?" "$log" | tail -1)
    echo "sanitize: $name: ${summary:-no test summary} exit $result, $reports sanitizer reports, $((SECONDS - started)) s"
    if [ "$reports" -gt 0 ]; then
        echo "sanitize: our code in the reports' top frames (count, place):"
        grep -A12 "$pattern" "$log" | grep -oE "/(Sources|Adapters|Tests|Samples)/[^ ]+\.swift(:[0-9]+)*" \
            | sort | uniq -c | sort -rn | head -20
    fi
    if [ "$reports" -gt 0 ] || [ "$result" -ne 0 ]; then
        # Enough of the log to act on where only this output is kept (CI): the first report, the
        # failing tests, and the end of the log (a build error or the test summary).
        if [ "$reports" -gt 0 ]; then
            echo "sanitize: the first report:"
            awk -v pattern="$pattern" 'index($0, pattern) { on = 1 } on { print; if (/^SUMMARY:/) exit }' "$log" \
                | head -80
        fi
        echo "sanitize: failing tests:"
        grep -E "^✘ Test .* (failed|recorded an issue)" "$log" | head -20
        echo "sanitize: the last 40 lines of $log:"
        tail -40 "$log"
        status=1
    fi
}

if [ "$kind" = thread ] || [ "$kind" = all ]; then
    if [ -z "$filter" ]; then export MODELSTORE_TEST_TARGETS="$concurrency_targets"; fi
    run thread "-Xswiftc -DMODELSTORE_THREAD_SANITIZER" "${filter:-$concurrency}" "WARNING: ThreadSanitizer"
    unset MODELSTORE_TEST_TARGETS
fi
if [ "$kind" = address ] || [ "$kind" = all ]; then
    run address "" "$filter" "ERROR: AddressSanitizer"
fi
exit $status
