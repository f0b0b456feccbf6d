import Foundation
import ModelStore
import ModelStoreAppendLog
import ModelStoreTestSupport
import Testing

struct AppendLogRepairTests {
    @Test(arguments: 1...5)
    func repairKeepsEveryTransactionBeforeAFlippedBitAndSetsTheRestAside(record: Int) throws {
        let directory = try TemporaryDirectory(memoryBacked: true)
        let history = try RecordedHistory(in: directory.store)
        let segmentURL = file(directory.store, history.segment)
        let original = try bytes(of: segmentURL)
        let start = history.boundaries[record - 1]
        var damaged = original
        damaged[start + 14] ^= 0x10
        try Data(damaged).write(to: segmentURL)
        expectError(.corrupted) { try openStore(directory.store) }

        let report = try AppendLogStore.repair(at: directory.store)
        #expect(report.damage?.file == history.segment)
        #expect(report.damage?.offset == start)
        #expect(report.lastKeptTransaction == UInt64(record - 1))
        let setAside = try #require(report.setAside.first)
        #expect(report.setAside.count == 1)
        #expect(setAside.file == history.segment)
        #expect(setAside.offset == start)
        #expect(setAside.byteCount == original.count - start)
        #expect(setAside.intactRecordCount == 5 - record)
        #expect(setAside.transactions == (record < 5 ? UInt64(record + 1)...5 : nil))
        #expect(report.description.contains("set aside"))
        // The damaged bytes are kept, not deleted.
        #expect(try bytes(of: file(directory.store, setAside.savedAs)) == Array(damaged[start...]))
        #expect(try AppendLogStore.verify(at: directory.store).isHealthy)

        let store = try openStore(directory.store)
        #expect(try contents(of: store) == history.states[record - 1])
        try save(store, inserting: [try noteSnapshot("after repair")])
        #expect(store.info.transactionCount == UInt64(record))
        store.close()
        #expect(try contents(of: try openStore(directory.store)).count == history.states[record - 1].count + 1)
    }

    @Test func repairSetsAsideEverySegmentAfterTheDamagedOne() throws {
        let directory = try TemporaryDirectory(memoryBacked: true)
        let store = try openStore(directory.store, segmentSize: 4096)
        let filler = String(repeating: "f", count: 1500)
        for index in 0..<8 { try save(store, inserting: [try noteSnapshot("N\(index)", body: filler)]) }
        let segments = store.info.segments
        try #require(segments.count >= 3)
        store.close()
        let second = file(directory.store, segments[1].fileName)
        var damaged = try bytes(of: second)
        damaged[damaged.count - 3] ^= 1
        try Data(damaged).write(to: second)

        let report = try AppendLogStore.repair(at: directory.store)
        #expect(report.setAside.map(\.file) == segments.dropFirst().map(\.fileName))
        #expect(report.setAside.dropFirst().allSatisfy { $0.offset == 0 && $0.intactRecordCount > 0 })
        #expect(report.lastKeptTransaction == segments[1].firstTransaction + UInt64(segments[1].transactionCount) - 2)
        let reopened = try openStore(directory.store)
        #expect(reopened.info.transactionCount == report.lastKeptTransaction)
        #expect(try contents(of: reopened).count == Int(report.lastKeptTransaction))
    }

    @Test func aMissingSegmentStopsTheOpenAndRepairKeepsWhatComesBeforeIt() throws {
        let directory = try TemporaryDirectory(memoryBacked: true)
        let store = try openStore(directory.store, segmentSize: 4096)
        let filler = String(repeating: "f", count: 1500)
        for index in 0..<8 { try save(store, inserting: [try noteSnapshot("N\(index)", body: filler)]) }
        let segments = store.info.segments
        try #require(segments.count >= 3)
        store.close()
        try FileManager.default.removeItem(at: file(directory.store, segments[1].fileName))
        do {
            _ = try openStore(directory.store)
            Issue.record("a log with a missing segment opened")
        } catch let error as DataStoreError {
            #expect((error.underlyingError as? AppendLogDamage)?.file == segments[1].fileName)
        }
        let report = try AppendLogStore.repair(at: directory.store)
        #expect(report.setAside.map(\.file) == segments.dropFirst(2).map(\.fileName))
        #expect(report.lastKeptTransaction == UInt64(segments[0].transactionCount))
        #expect(try contents(of: try openStore(directory.store)).count == segments[0].transactionCount)
    }

    @Test func repairRebuildsAnUnreadableManifest() throws {
        let directory = try TemporaryDirectory(memoryBacked: true)
        let history = try RecordedHistory(in: directory.store)
        try Data("ModelStore append log\ngarbage\n".utf8).write(to: file(directory.store, "manifest"))
        let report = try AppendLogStore.repair(at: directory.store)
        #expect(report.rebuiltManifest)
        #expect(report.setAside.map(\.file) == ["manifest"])
        #expect(try contents(of: try openStore(directory.store)) == history.states.last)
    }

    @Test func repairReplacesADamagedCheckpointByTheHistory() throws {
        let directory = try TemporaryDirectory(memoryBacked: true)
        let store = try openStore(directory.store)
        let ids = try save(store, inserting: try (0..<10).map { try noteSnapshot("N\($0)", rank: $0) })
        try save(store, deleting: [try current(store, ids[3])])
        let compaction = try store.compact()
        try save(store, inserting: [try noteSnapshot("tail")])
        let expected = try contents(of: store)
        store.close()
        let checkpoint = file(directory.store, compaction.checkpoint)
        var damaged = try bytes(of: checkpoint)
        damaged[damaged.count / 2] ^= 4
        try Data(damaged).write(to: checkpoint)
        expectError(.corrupted) { try openStore(directory.store) }

        let report = try AppendLogStore.repair(at: directory.store)
        #expect(report.rebuiltFromHistory)
        #expect(report.setAside.map(\.file) == [compaction.checkpoint])
        #expect(try contents(of: try openStore(directory.store)) == expected)
    }

    @Test func repairCutsATornTailAndReportsIt() throws {
        let directory = try TemporaryDirectory(memoryBacked: true)
        let history = try RecordedHistory(in: directory.store)
        let segmentURL = file(directory.store, history.segment)
        let original = try bytes(of: segmentURL)
        try history.crash(directory.store, at: original.count - 4, original: original)
        let report = try AppendLogStore.repair(at: directory.store)
        #expect(report.damage == nil)
        #expect(report.tornTail?.offset == history.boundaries[4])
        #expect(report.lastKeptTransaction == 4)
        #expect(try contents(of: try openStore(directory.store)) == history.states[4])
    }

    @Test func repairingAHealthyStoreChangesNothing() throws {
        let directory = try TemporaryDirectory(memoryBacked: true)
        _ = try RecordedHistory(in: directory.store)
        let before = try FileManager.default.contentsOfDirectory(atPath: directory.store.path).sorted()
        let report = try AppendLogStore.repair(at: directory.store)
        #expect(!report.changedAnything)
        #expect(report.lastKeptTransaction == 5)
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.store.path).sorted() == before)
    }
}
