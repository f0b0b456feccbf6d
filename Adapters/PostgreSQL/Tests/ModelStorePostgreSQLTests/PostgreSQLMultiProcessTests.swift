import Foundation
import ModelStore
import ModelStorePostgreSQL
import PostgreSQLTestModels
import Testing

/// Several OS processes on one database: worker processes (`modelstore-pg-worker`) increment
/// shared counters by read-modify-write saves; afterwards every counter equals the increments the
/// workers were told succeeded, so no update was lost, and this process saw every one of those
/// saves through the history, in commit order.
@Suite(.enabled(if: PostgreSQLServer.isConfigured, PostgreSQLServer.skipMessage))
struct PostgreSQLMultiProcessTests {
    /// The worker built beside the test bundle.
    private var worker: URL {
        URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
            .appendingPathComponent("modelstore-pg-worker")
    }

    /// Runs workers at once and returns each one's report line.
    private func runWorkers(_ count: Int, arguments: [String]) throws -> [String] {
        var processes: [(Process, Pipe)] = []
        for _ in 0..<count {
            let process = Process()
            process.executableURL = worker
            process.arguments = arguments
            let output = Pipe()
            process.standardOutput = output
            try process.run()
            processes.append((process, output))
        }
        return try processes.map { process, output in
            let data = output.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            try #require(process.terminationStatus == 0, "a worker exited with \(process.terminationStatus)")
            return String(decoding: data, as: UTF8.self)
        }
    }

    /// A container on `namespace` with counters `c0`, `c1` and `c2` at zero, saved.
    private func threeCounters(_ namespace: String) throws -> ModelContainer {
        let container = try ModelContainer(
            for: Counter.schema, configurations: [try PostgreSQLServer.configuration(namespace: namespace)])
        let context = ModelContext(container)
        for index in 0..<3 { context.insert(Counter(name: "c\(index)")) }
        try context.save()
        return container
    }

    /// Whether a transaction is one update of a counter's value.
    private func isOneIncrement(_ transaction: DefaultHistoryTransaction) -> Bool {
        guard transaction.changes.count == 1,
            case .update(let update as DefaultHistoryUpdate<Counter>) = transaction.changes[0]
        else { return false }
        return update.updatedAttributes.names == ["value"]
    }

    private func field(_ name: String, in line: String) -> String? {
        line.split(separator: " ").first { $0.hasPrefix(name + "=") }.map { String($0.dropFirst(name.count + 1)) }
            .map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }
    }

    @Test func workerProcessesIncrementingSharedCountersLoseNoUpdate() throws {
        #expect(FileManager.default.isExecutableFile(atPath: worker.path), "no worker at \(worker.path)")
        let namespace = PostgreSQLServer.freshNamespace("mp")
        let container = try threeCounters(namespace)

        let reports = try runWorkers(4, arguments: [namespace, "25", "3", "60", "2"])
        var acknowledged = [0, 0, 0]
        for report in reports {
            let perCounter = try #require(field("perCounter", in: report), "report: \(report)")
            for (index, count) in perCounter.split(separator: ",").enumerated() {
                acknowledged[index] += Int(count) ?? 0
            }
        }
        #expect(acknowledged.reduce(0, +) == 4 * 2 * 25)
        let stored = try ModelContext(container).fetch(FetchDescriptor<Counter>(sortBy: [SortDescriptor(\.name)]))
        #expect(stored.map(\.value) == acknowledged)
    }

    /// While workers save, this process watches the history (`watchExternalChanges`): every
    /// acknowledged increment is one transaction, numbered 1, 2, 3, … without a gap across the
    /// processes, and each reaches the watcher exactly once. A watcher reads only the transactions
    /// after the newest it saw, so one committed late under a smaller number would be missed.
    @Test func workerProcessesSavesReachTheWatcherExactlyOnceInCommitOrder() async throws {
        let namespace = PostgreSQLServer.freshNamespace("mw")
        let container = try threeCounters(namespace)
        let context = ModelContext(container)

        let seen = LockedValue<Set<DefaultHistoryToken>>([])
        let duplicates = LockedValue(0)
        let subscribed = LockedValue(false)
        let collector = Task {
            var changes = container.changes.makeAsyncIterator()
            subscribed.withLock { $0 = true }
            while let change = await changes.next() {
                guard change.origin == .external else { continue }
                for token in change.historyTokens where !seen.withLock({ $0.insert(token).inserted }) {
                    duplicates.withLock { $0 += 1 }
                }
            }
        }
        while !subscribed.withLock({ $0 }) { try await Task.sleep(for: .milliseconds(5)) }
        let watch = container.watchExternalChanges(every: .milliseconds(20))
        let reports = try runWorkers(3, arguments: [namespace, "20", "3", "60", "2"])
        let acknowledged = try reports.reduce(0) { total, report in
            total + (Int(try #require(field("acknowledged", in: report), "report: \(report)")) ?? 0)
        }
        #expect(acknowledged == 3 * 2 * 20)

        let history = try context.fetchHistory(HistoryDescriptor<DefaultHistoryTransaction>())
        #expect(history.map(\.token.transactionNumber) == Array(1...Int64(1 + acknowledged)))
        #expect(
            history.dropFirst().allSatisfy(isOneIncrement), "an increment is not recorded as one update of 'value'")

        // Bounded wait for the watcher's last turn; what it saw is checked below, not how fast.
        for _ in 0..<500 where seen.withLock({ $0.count }) < acknowledged {
            try await Task.sleep(for: .milliseconds(20))
        }
        watch.cancel()
        collector.cancel()
        let tokens = seen.withLock { $0 }
        #expect(tokens == Set(history.dropFirst().map(\.token)), "the watcher missed or invented transactions")
        #expect(duplicates.withLock { $0 } == 0, "the watcher published a transaction twice")
    }
}
