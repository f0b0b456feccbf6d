import Foundation
import ModelStore
import ModelStoreAppendLog
import ModelStoreTestSupport
import Testing

struct AppendLogCompactionTests {
    /// Inserts notes, then updates and deletes some, so the log has dead bytes.
    private func churn(_ store: AppendLogStore, rounds: Int = 5) throws -> [PersistentIdentifier] {
        let ids = try save(store, inserting: try (0..<10).map { try noteSnapshot("N\($0)", rank: $0, code: "c\($0)") })
        for round in 0..<rounds {
            var updated: [DefaultSnapshot] = []
            for id in ids.prefix(6) {
                var snapshot = try current(store, id)
                snapshot["body"] = .string("round \(round) " + String(repeating: "b", count: 200))
                updated.append(snapshot)
            }
            try save(store, updating: updated, author: "round \(round)")
        }
        try save(store, deleting: [try current(store, ids[9])])
        return ids
    }

    @Test func compactionWritesACheckpointAndKeepsReplacedSegmentsAsHistory() throws {
        let directory = try TemporaryDirectory(memoryBacked: true)
        let store = try openStore(directory.store)
        _ = try churn(store)
        let before = store.info
        #expect(before.deadFraction > 0.5)
        let report = try store.compact()
        let after = store.info
        #expect(report.archivedSegments == ["segment-00000001.mslog"])
        #expect(after.checkpoint?.fileName == report.checkpoint)
        #expect(after.checkpoint?.modelCount == 9)
        #expect(after.segments.map(\.number) == [2])
        #expect(after.historySegments.map(\.fileName) == ["history/segment-00000001.mslog"])
        #expect(after.deadFraction < 0.05)
        #expect(after.logByteCount < before.logByteCount)
        #expect(report.byteCountAfter == after.logByteCount)
        let expected = try contents(of: store)
        store.close()
        #expect(try contents(of: try openStore(directory.store)) == expected)
        let names = try FileManager.default.contentsOfDirectory(atPath: directory.store.path).sorted()
        #expect(
            names == [
                "checkpoint-00000002.mscheckpoint", "history", "lock", "manifest", "segment-00000002.mslog", "synced",
            ])
    }

    @Test func reopeningLoadsTheCheckpointThenReplaysTheTail() throws {
        let directory = try TemporaryDirectory(memoryBacked: true)
        var store = try openStore(directory.store)
        let ids = try churn(store)
        try store.compact()
        var first = try current(store, ids[0])
        first["rank"] = .int(99)
        try save(store, updating: [first], deleting: [try current(store, ids[1])])
        try save(store, inserting: [try noteSnapshot("after checkpoint")])
        let expected = try contents(of: store)
        store.close()
        store = try openStore(directory.store)
        #expect(try contents(of: store) == expected)
        #expect(store.info.transactionCount == 9)
        // Keys minted before the checkpoint are never minted again.
        let next = try #require(try save(store, inserting: [try noteSnapshot("next")]).first)
        #expect(!expected.keys.contains(next.description))
        #expect(next.primaryKey > ids[9].primaryKey)
    }

    @Test func savesMadeWhileACompactionRunsAreKept() throws {
        let directory = try TemporaryDirectory(memoryBacked: true)
        let store = try openStore(directory.store)
        _ = try churn(store)
        store.hooks.compactionWillWrite = { [weak store] in
            guard let store else { return }
            // The checkpoint is being written from a copy; these saves go to the new segment.
            _ = try? save(store, inserting: [try noteSnapshot("during 1"), try noteSnapshot("during 2")])
        }
        try store.compact()
        store.hooks.compactionWillWrite = nil
        let expected = try contents(of: store)
        #expect(expected.values.contains { $0["title"] == "\"during 2\"" })
        store.close()
        #expect(try contents(of: try openStore(directory.store)) == expected)
    }

    @Test func concurrentSavesAndRepeatedCompactionsLoseNothing() throws {
        let directory = try TemporaryDirectory(memoryBacked: true)
        let store = try openStore(directory.store, durability: .batched)
        let failures = LockedValue<[String]>([])
        onThreads(5) { worker in
            if worker == 0 {
                for _ in 0..<6 {
                    do { try store.compact() } catch { failures.withLock { $0.append("compact: \(error)") } }
                }
                return
            }
            for index in 0..<40 {
                do {
                    let id = try #require(try save(store, inserting: [try noteSnapshot("w\(worker)-\(index)")]).first)
                    if index % 3 == 0 {
                        var snapshot = try current(store, id)
                        snapshot["rank"] = .int(Int64(index))
                        try save(store, updating: [snapshot])
                    }
                } catch {
                    failures.withLock { $0.append("\(error)") }
                }
            }
        }
        #expect(failures.withLock { $0 }.isEmpty)
        let expected = try contents(of: store)
        #expect(expected.count == 160)
        store.close()
        let reopened = try openStore(directory.store)
        #expect(try contents(of: reopened) == expected)
        #expect(try AppendLogStore.verify(at: directory.store).isHealthy)
    }

    @Test func automaticCompactionRunsPastTheDeadFractionThreshold() throws {
        let directory = try TemporaryDirectory(memoryBacked: true)
        let store = try openStore(directory.store, compaction: .automatic(deadFraction: 0.6, minimumLogSize: 4096))
        let id = try #require(
            try save(store, inserting: [try noteSnapshot("hot", body: String(repeating: "h", count: 300))]).first)
        var rank: Int64 = 0
        while store.info.checkpoint == nil && rank < 500 {
            var snapshot = try current(store, id)
            rank += 1
            snapshot["rank"] = .int(rank)
            snapshot["body"] = .string(String(repeating: "h", count: 300) + "\(rank)")
            try save(store, updating: [snapshot])
            store.waitForBackgroundCompaction()
        }
        let info = store.info
        #expect(info.checkpoint != nil, "no compaction after \(rank) updates")
        #expect(info.deadFraction < 0.6)
        #expect(!info.historySegments.isEmpty)
        #expect(try current(store, id)["rank"] == .int(rank))
    }

    @Test func manualCompactionPolicyNeverCompactsByItself() throws {
        let directory = try TemporaryDirectory(memoryBacked: true)
        let store = try openStore(directory.store, compaction: .manual)
        _ = try churn(store, rounds: 30)
        store.waitForBackgroundCompaction()
        #expect(store.info.checkpoint == nil)
        #expect(store.info.deadFraction > 0.6)
    }

    @Test func openingFinishesACompactionACrashInterrupted() throws {
        let directory = try TemporaryDirectory(memoryBacked: true)
        var store = try openStore(directory.store)
        _ = try churn(store)
        try store.compact()
        try save(store, inserting: [try noteSnapshot("tail")])
        let expected = try contents(of: store)
        store.close()
        // As if the crash came after the manifest switch but before the clean-up.
        try FileManager.default.moveItem(
            at: file(directory.store, "history/segment-00000001.mslog"),
            to: file(directory.store, "segment-00000001.mslog"))
        try Data("junk".utf8).write(to: file(directory.store, "checkpoint-00000007.mscheckpoint"))
        try Data("junk".utf8).write(to: file(directory.store, "manifest.tmp"))
        store = try openStore(directory.store)
        #expect(try contents(of: store) == expected)
        let names = try FileManager.default.contentsOfDirectory(atPath: directory.store.path).sorted()
        #expect(
            names == [
                "checkpoint-00000002.mscheckpoint", "history", "lock", "manifest", "segment-00000002.mslog", "synced",
            ])
        #expect(FileManager.default.fileExists(atPath: file(directory.store, "history/segment-00000001.mslog").path))
    }
}
