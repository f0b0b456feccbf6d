import Foundation
import ModelStore
import ModelStoreAppendLog
import ModelStoreTestSupport
import Synchronization
import Testing

/// Runs `body` on `count` new threads at once and waits for all of them.
func onThreads(_ count: Int, _ body: @escaping @Sendable (Int) -> Void) {
    let group = DispatchGroup()
    for index in 0..<count {
        group.enter()
        let thread = Thread {
            body(index)
            group.leave()
        }
        thread.start()
    }
    group.wait()
}

struct AppendLogDurabilityTests {
    @Test func everySaveSyncsOncePerSave() throws {
        let directory = try TemporaryDirectory()
        let store = try openStore(directory.store, durability: .everySave)
        for index in 0..<5 { try save(store, inserting: [try noteSnapshot("N\(index)")]) }
        #expect(store.syncCount == 5)
    }

    @Test func noneNeverSyncsYetSurvivesTheProcessClosingTheStore() throws {
        let directory = try TemporaryDirectory()
        let store = try openStore(directory.store, durability: .none)
        for index in 0..<5 { try save(store, inserting: [try noteSnapshot("N\(index)")]) }
        #expect(store.syncCount == 0)
        let expected = try contents(of: store)
        store.close()
        #expect(try contents(of: try openStore(directory.store, durability: .none)) == expected)
    }

    @Test func batchedSavesOneAtATimeEachLeadTheirOwnSync() throws {
        let directory = try TemporaryDirectory()
        let store = try openStore(directory.store, durability: .batched)
        for index in 0..<4 { try save(store, inserting: [try noteSnapshot("N\(index)")]) }
        #expect(store.syncCount == 4)
    }

    /// Holds the first sync until every other save has written its record: they must then share
    /// one sync, and none may return before a sync that covers its record has started.
    @Test func concurrentBatchedSavesShareASyncAndReturnOnlyOnceDurable() throws {
        let directory = try TemporaryDirectory()
        let store = try openStore(directory.store, durability: .batched)
        let saves = 8
        let returned = LockedValue<Set<String>>([])
        let syncs = LockedValue<[(target: UInt64, returned: Set<String>)]>([])
        let first = Atomic<Bool>(true)
        store.setBeforeSyncHook { [weak store] target in
            syncs.withLock { $0.append((target, returned.withLock { $0 })) }
            guard first.exchange(false, ordering: .sequentiallyConsistent), let store else { return }
            let deadline = Date().addingTimeInterval(60)
            while store.info.transactionCount < UInt64(saves) && Date() < deadline { usleep(500) }
        }
        let failures = LockedValue<[String]>([])
        onThreads(saves) { index in
            do {
                try save(store, inserting: [try noteSnapshot("T\(index)")])
                returned.withLock { _ = $0.insert("T\(index)") }
            } catch {
                failures.withLock { $0.append("\(error)") }
            }
        }
        #expect(failures.withLock { $0 }.isEmpty)
        #expect(store.info.transactionCount == UInt64(saves))
        #expect(store.syncCount <= 2, "\(saves) concurrent saves took \(store.syncCount) syncs")
        // Each save returned only after the start of a sync covering its transaction.
        let numbers = try transactionNumbersByTitle(store)
        let recorded = syncs.withLock { $0 }
        for (title, number) in numbers {
            let covering = try #require(recorded.first { $0.target >= number }, "no sync covered \(title)")
            #expect(!covering.returned.contains(title), "\(title) returned before the sync covering it")
        }
    }

    @Test func savesFromManyTasksAreAllDurable() async throws {
        let directory = try TemporaryDirectory()
        let store = try openStore(directory.store, durability: .batched)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for index in 0..<40 {
                group.addTask { try save(store, inserting: [try noteSnapshot("Task \(index)")]) }
            }
            try await group.waitForAll()
        }
        #expect(store.syncCount <= 40)
        let expected = try contents(of: store)
        store.close()
        let reopened = try openStore(directory.store)
        #expect(try contents(of: reopened) == expected)
        #expect(expected.count == 40)
    }
}

/// The transaction number of each inserted note, by title.
func transactionNumbersByTitle(_ store: AppendLogStore) throws -> [String: UInt64] {
    let titles = try contents(of: store)
    var result: [String: UInt64] = [:]
    for transaction in try store.transactions() {
        for case .insert(let id) in transaction.changes {
            if let title = titles[id.description]?["title"] {
                result[title.trimmingCharacters(in: CharacterSet(charactersIn: "\""))] = transaction.number
            }
        }
    }
    return result
}
