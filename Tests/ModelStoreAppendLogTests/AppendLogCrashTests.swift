import Foundation
import ModelStore
import ModelStoreAppendLog
import ModelStoreTestSupport
import Testing

/// A short history saved with `.everySave`, with what the store held after each transaction and
/// where each transaction's record ends in the segment: the oracle for the crash tests.
struct RecordedHistory {
    /// The store's directory.
    let directory: URL
    /// The segment's file name.
    let segment = "segment-00000001.mslog"
    /// `boundaries[k]`: the segment's size once `k` transactions were acknowledged.
    var boundaries: [Int] = []
    /// `states[k]`: the store's models once `k` transactions were acknowledged.
    var states: [[String: [String: String]]] = []
    /// `marks[k]`: the store's `synced` mark once `k` transactions were acknowledged, as a crash
    /// during transaction `k + 1` leaves it.
    var marks: [Data] = []

    /// Saves five transactions covering inserts, relationships, updates, deletes and tombstones.
    init(in directory: URL) throws {
        self.directory = directory
        let store = try openStore(directory, durability: .everySave)
        let segmentURL = file(directory, segment)
        func record() throws {
            boundaries.append(FileManager.default.sizeOfFile(segmentURL))
            states.append(try contents(of: store))
            marks.append((try? Data(contentsOf: file(directory, "synced"))) ?? Data())
        }
        try record()
        let folderEntity = try #require(noteSchema.entity(named: "Folder"))
        let folderID = PersistentIdentifier.temporary(entityName: "Folder")
        var a = try noteSnapshot("A", rank: 1, code: "keep-a")
        var b = try noteSnapshot("B", rank: 2, code: "keep-b")
        a["folder"] = .reference(folderID)
        b["folder"] = .reference(folderID)
        let folder = try DefaultSnapshot(
            persistentIdentifier: folderID, entity: folderEntity,
            namedValues: [
                "name": .string("Inbox"), "notes": .references([a.persistentIdentifier, b.persistentIdentifier]),
            ])
        let ids = try save(store, inserting: [folder, a, b], author: "first")
        try record()
        var changedA = try current(store, ids[1])
        changedA["rank"] = .int(10)
        changedA["body"] = .string("changed ✓")
        try save(store, updating: [changedA], author: "second")
        try record()
        let c = try #require(try save(store, inserting: [try noteSnapshot("C", rank: 3)]).first)
        try record()
        try save(store, deleting: [try current(store, ids[2])], author: "fourth")
        try record()
        var changedC = try current(store, c)
        changedC["title"] = .string("C2")
        changedC["tags"] = .array([.string("x"), .string("y")])
        try save(store, updating: [changedC])
        try record()
        store.close()
    }

    /// Makes the copy of the store at `work` look as a crash at byte `length` of the segment leaves
    /// it: the segment cut there, and the `synced` mark as it was while that transaction was written.
    func crash(_ work: URL, at length: Int, original: [UInt8]) throws {
        try Data(original[..<length]).write(to: file(work, segment))
        try marks[acknowledged(within: length)].write(to: file(work, "synced"))
    }

    /// How many transactions are wholly inside the first `length` bytes of the segment.
    func acknowledged(within length: Int) -> Int {
        boundaries.lastIndex { $0 <= length } ?? 0
    }

    /// The start of the record that holds byte `offset` (0 for the signature, 8 for the header).
    func recordStart(holding offset: Int) -> Int {
        if offset < 8 { return 0 }
        if offset < boundaries[0] { return 8 }
        return boundaries.last { $0 <= offset }!
    }
}

struct AppendLogCrashTests {
    @Test func cuttingTheLogAtEveryByteYieldsExactlyTheAcknowledgedTransactions() throws {
        let directory = try TemporaryDirectory(memoryBacked: true)
        let history = try RecordedHistory(in: directory.store)
        let original = try bytes(of: file(directory.store, history.segment))
        let work = directory.file("work")
        #expect(history.states.count == 6)
        for length in 0...original.count {
            try copyStore(directory.store, to: work)
            try history.crash(work, at: length, original: original)
            let store = try openStore(work)
            let expected = history.acknowledged(within: length)
            let atBoundary = history.boundaries.contains(length)
            #expect(try contents(of: store) == history.states[expected], "cut at \(length)")
            #expect(
                (store.tornTail == nil) == atBoundary,
                "cut at \(length): torn tail \(String(describing: store.tornTail))")
            if let torn = store.tornTail {
                let start = length < history.boundaries[0] ? 0 : history.boundaries[expected]
                #expect(torn.offset == start, "cut at \(length)")
                #expect(torn.droppedByteCount == length - start, "cut at \(length)")
                #expect(!torn.description.contains("never acknowledged"), "\(torn)")
                #expect(torn.syncedThrough == (expected == 0 ? nil : UInt64(expected)), "cut at \(length)")
            }
            // A save after recovery lands after the last whole transaction, and survives reopening.
            if length % 97 == 0 || !atBoundary && length % 13 == 0 {
                try save(store, inserting: [try noteSnapshot("After \(length)")])
                let after = try contents(of: store)
                store.close()
                let reopened = try openStore(work)
                #expect(reopened.tornTail == nil)
                #expect(try contents(of: reopened) == after, "cut at \(length), then saved")
                reopened.close()
            } else {
                store.close()
            }
        }
    }

    @Test func flippingABitAnywhereInTheSegmentIsAClearErrorNamingSegmentAndOffset() throws {
        let directory = try TemporaryDirectory(memoryBacked: true)
        let history = try RecordedHistory(in: directory.store)
        let original = try bytes(of: file(directory.store, history.segment))
        let work = directory.file("work")
        for offset in 0..<original.count {
            // Every bit of the records; one bit per byte of the signature and header.
            let bits = offset >= history.boundaries[0] ? Array(0..<8) : [offset % 8]
            for bit in bits {
                try copyStore(directory.store, to: work)
                var damaged = original
                damaged[offset] ^= 1 << bit
                try Data(damaged).write(to: file(work, history.segment))
                do {
                    let store = try openStore(work)
                    Issue.record(
                        "a flipped bit \(bit) at byte \(offset) opened with \(try contents(of: store).count) models")
                } catch let error as DataStoreError {
                    #expect(error.code == .corrupted)
                    let damage = try #require(error.underlyingError as? AppendLogDamage, "\(error)")
                    #expect(damage.file == history.segment)
                    #expect(damage.offset == history.recordStart(holding: offset), "bit \(bit) at \(offset): \(damage)")
                    #expect(error.description.contains(history.segment))
                    #expect(error.description.contains("repair"))
                }
                // A failed open writes nothing.
                #expect(try bytes(of: file(work, history.segment)) == damaged)
                #expect(!FileManager.default.fileExists(atPath: work.appendingPathComponent("damaged").path))
            }
        }
    }

    @Test func flippingABitInTheManifestIsAClearError() throws {
        let directory = try TemporaryDirectory(memoryBacked: true)
        _ = try RecordedHistory(in: directory.store)
        let original = try bytes(of: file(directory.store, "manifest"))
        let work = directory.file("work")
        for offset in 0..<original.count {
            try copyStore(directory.store, to: work)
            var damaged = original
            damaged[offset] ^= 1 << (offset % 7)
            try Data(damaged).write(to: file(work, "manifest"))
            expectError(.corrupted, "byte \(offset)") { try openStore(work) }
        }
    }

    @Test func aCutInsideASegmentThatIsNotTheLastIsDamageNotATornTail() throws {
        let directory = try TemporaryDirectory(memoryBacked: true)
        let store = try openStore(directory.store, segmentSize: 4096)
        let filler = String(repeating: "f", count: 1500)
        for index in 0..<6 { try save(store, inserting: [try noteSnapshot("N\(index)", body: filler)]) }
        #expect(store.info.segments.count >= 3)
        store.close()
        let first = file(directory.store, "segment-00000001.mslog")
        let size = FileManager.default.sizeOfFile(first)
        try Data(try bytes(of: first).dropLast(5)).write(to: first)
        do {
            _ = try openStore(directory.store)
            Issue.record("a cut segment followed by others opened")
        } catch let error as DataStoreError {
            let damage = try #require(error.underlyingError as? AppendLogDamage)
            #expect(damage.file == "segment-00000001.mslog")
            #expect(damage.offset < size)
        }
    }

    @Test func flippingABitInTheCheckpointIsAClearErrorNamingIt() throws {
        let directory = try TemporaryDirectory(memoryBacked: true)
        let store = try openStore(directory.store)
        try save(store, inserting: try (0..<20).map { try noteSnapshot("N\($0)", rank: $0) })
        let report = try store.compact()
        try save(store, inserting: [try noteSnapshot("after")])
        store.close()
        let original = try bytes(of: file(directory.store, report.checkpoint))
        let work = directory.file("work")
        for offset in stride(from: 0, to: original.count, by: 3) {
            try copyStore(directory.store, to: work)
            var damaged = original
            damaged[offset] ^= 1 << (offset % 8)
            try Data(damaged).write(to: file(work, report.checkpoint))
            do {
                _ = try openStore(work)
                Issue.record("a flipped bit at byte \(offset) of the checkpoint opened")
            } catch let error as DataStoreError {
                #expect(error.code == .corrupted)
                #expect((error.underlyingError as? AppendLogDamage)?.file == report.checkpoint)
            }
        }
    }
}
