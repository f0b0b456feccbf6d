import Foundation
import ModelStore
import ModelStoreAppendLog
import ModelStoreTestSupport
import Testing

struct AppendLogInspectionTests {
    @Test func inspectingAClosedStoreNeedsNoSchemaAndMatchesTheOpenStore() throws {
        let directory = try TemporaryDirectory(memoryBacked: true)
        _ = try RecordedHistory(in: directory.store)
        let store = try openStore(directory.store)
        let open = store.info
        store.close()
        let closed = try AppendLogStore.inspect(at: directory.store)
        #expect(closed.storeIdentifier == open.storeIdentifier)
        #expect(closed.transactionCount == 5)
        #expect(closed.modelCount == 3)
        #expect(closed.entities.map(\.name) == ["Note", "Folder"])
        #expect(closed.entities.map(\.modelCount) == [2, 1])
        #expect(open.entities.map(\.modelCount) == [2, 1])
        #expect(closed.segments == open.segments)
        #expect(closed.segments.first?.transactionCount == 5)
        #expect(closed.logByteCount == open.logByteCount)
        #expect(closed.schema == noteSchema.storedDescription)
        #expect(abs(closed.deadFraction - open.deadFraction) < 0.1)
        #expect(try AppendLogStore.storedSchema(at: directory.store) == noteSchema.storedDescription)
    }

    @Test func aStoreOpensWithTheSchemaItDescribes() throws {
        let directory = try TemporaryDirectory(memoryBacked: true)
        let history = try RecordedHistory(in: directory.store)
        let schema = try Schema(try AppendLogStore.storedSchema(at: directory.store))
        let store = try openStore(directory.store, schema: schema)
        #expect(try contents(of: store) == history.states.last)
    }

    @Test func verifyReportsHealthTornTailsAndEveryDamagedPlace() throws {
        let directory = try TemporaryDirectory(memoryBacked: true)
        let history = try RecordedHistory(in: directory.store)
        let healthy = try AppendLogStore.verify(at: directory.store)
        #expect(healthy.isHealthy)
        #expect(healthy.tornTail == nil)
        #expect(healthy.description.hasPrefix("healthy"))

        let segmentURL = file(directory.store, history.segment)
        let original = try bytes(of: segmentURL)
        try history.crash(directory.store, at: original.count - 2, original: original)
        let torn = try AppendLogStore.verify(at: directory.store)
        #expect(torn.isHealthy)
        #expect(torn.tornTail?.offset == history.boundaries[4])

        var damaged = original
        damaged[history.boundaries[2] + 20] ^= 0x40
        try Data(damaged).write(to: segmentURL)
        let report = try AppendLogStore.verify(at: directory.store)
        #expect(!report.isHealthy)
        #expect(
            report.problems == [
                AppendLogDamage(
                    file: history.segment, offset: history.boundaries[2], reason: "the record fails its checksum")
            ])
        #expect(report.description.contains("'\(history.segment)' at byte \(history.boundaries[2])"))
        // Verifying writes nothing.
        #expect(try bytes(of: segmentURL) == damaged)
    }

    @Test func aDirectoryWithoutALogIsNotFound() throws {
        let directory = try TemporaryDirectory(memoryBacked: true)
        expectError(.notFound) { try AppendLogStore.inspect(at: directory.url) }
        expectError(.notFound) { try AppendLogStore.verify(at: directory.url) }
        expectError(.notFound) { try AppendLogStore.repair(at: directory.url) }
    }
}

struct AppendLogHistoryTests {
    @Test func transactionsCarryNumbersAuthorsChangesAndTombstones() throws {
        let directory = try TemporaryDirectory(memoryBacked: true)
        _ = try RecordedHistory(in: directory.store)
        let store = try openStore(directory.store)
        let transactions = try store.transactions()
        #expect(transactions.map(\.number) == [1, 2, 3, 4, 5])
        #expect(transactions.map(\.author) == ["first", "second", nil, "fourth", nil])
        #expect(transactions.map(\.token) == transactions.map(\.token).sorted())
        #expect(transactions[0].changes.count == 3)
        guard case .update(_, let properties) = transactions[1].changes.first else {
            Issue.record("transaction 2 is not an update")
            return
        }
        #expect(Set(properties) == ["rank", "body"])
        guard case .delete(let id, let tombstone) = transactions[3].changes.first else {
            Issue.record("transaction 4 is not a delete")
            return
        }
        #expect(id.entityName == "Note")
        #expect(tombstone == ["code": .string("keep-b")])
        #expect(try store.transactions(after: transactions[2].token).map(\.number) == [4, 5])
        #expect(try store.transactions(after: store.currentPosition).isEmpty)
        #expect(try AppendLogStore.transactions(at: directory.store).count == 5)
    }

    @Test func compactionKeepsHistoryUntilItIsDeleted() throws {
        let directory = try TemporaryDirectory(memoryBacked: true)
        _ = try RecordedHistory(in: directory.store)
        let store = try openStore(directory.store)
        let oldToken = try #require(try store.transactions().first?.token)
        try store.compact()
        try save(store, inserting: [try noteSnapshot("after")], author: "later")
        #expect(try store.transactions().map(\.number) == [1, 2, 3, 4, 5, 6])
        #expect(try store.transactions(after: oldToken).map(\.number) == [2, 3, 4, 5, 6])

        let deleted = try store.deleteHistory(before: store.currentPosition)
        #expect(deleted == ["history/segment-00000001.mslog"])
        #expect(try store.transactions().map(\.number) == [6])
        expectError(.notFound) { try store.transactions(after: oldToken) }
        // The store still opens: deleting history never touches what opening needs.
        let expected = try contents(of: store)
        store.close()
        #expect(try contents(of: try openStore(directory.store)) == expected)
    }
}
