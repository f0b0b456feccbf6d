import Foundation
import ModelStore
import ModelStoreFileIO
import ModelStoreTestSupport
import Testing

@testable import ModelStoreAppendLog

/// The gaps outside tries found: a log cut from outside at a record boundary, messages that claim
/// more than is known, version errors, and a failed open that wrote its lock file.
struct AppendLogReliabilityTests {
    @Test func aLogCutFromOutsideAtARecordBoundaryIsRefusedNotSilentlyShorter() throws {
        let directory = try TemporaryDirectory(memoryBacked: true)
        let history = try RecordedHistory(in: directory.store)
        let original = try bytes(of: file(directory.store, history.segment))
        let work = directory.file("work")
        for kept in 1..<(history.boundaries.count - 1) {
            try copyStore(directory.store, to: work)
            let cut = Array(original[..<history.boundaries[kept]])
            try Data(cut).write(to: file(work, history.segment))
            try Data().write(to: file(work, "lock"))
            let before = try FileTree.snapshot(work)
            do {
                _ = try openStore(work)
                Issue.record("a log cut after transaction \(kept) of 5 opened")
            } catch let error as DataStoreError {
                #expect(error.code == .corrupted)
                let damage = try #require(error.underlyingError as? AppendLogDamage)
                #expect(damage.file == history.segment)
                #expect(damage.offset == history.boundaries[kept])
                #expect(damage.reason.contains("synced"), "\(damage)")
                #expect(damage.reason.contains("transaction \(kept)"), "\(damage)")
            }
            #expect(try FileTree.snapshot(work) == before, "a failed open changed the store")
            let verification = try AppendLogStore.verify(at: work)
            #expect(verification.problems.map(\.offset) == [history.boundaries[kept]], "\(verification.problems)")
            // Repair keeps what is there and lowers the mark; the store opens again.
            _ = try AppendLogStore.repair(at: work)
            let repaired = try openStore(work)
            #expect(try contents(of: repaired) == history.states[kept])
            repaired.close()
        }
    }

    @Test func aTornTailSaysWhatIsKnownNotThatItWasNeverAcknowledged() throws {
        let directory = try TemporaryDirectory(memoryBacked: true)
        let history = try RecordedHistory(in: directory.store)
        let original = try bytes(of: file(directory.store, history.segment))
        try history.crash(directory.store, at: history.boundaries[3] + 5, original: original)
        let store = try openStore(directory.store)
        let torn = try #require(store.tornTail)
        #expect(torn.syncedThrough == 3)
        #expect(!torn.description.contains("never acknowledged"))
        #expect(torn.description.contains("up to 3, the last the log recorded as synced, is kept"))
        store.close()
        // Without a mark nothing is known, and the message says so.
        let unmarked = try TemporaryDirectory(memoryBacked: true)
        let second = try RecordedHistory(in: unmarked.store)
        let secondSegment = file(unmarked.store, second.segment)
        try Data(try bytes(of: secondSegment)[..<(second.boundaries[2] + 5)]).write(to: secondSegment)
        try FileManager.default.removeItem(at: file(unmarked.store, "synced"))
        let reopened = try openStore(unmarked.store)
        #expect(reopened.tornTail?.syncedThrough == nil)
        #expect(reopened.tornTail?.description.contains("is not known") == true)
        reopened.close()
    }

    @Test func everyDurabilityModeRecordsTheSyncedEnd() throws {
        for durability in [AppendLogStoreConfiguration.Durability.none, .batched, .everySave] {
            let directory = try TemporaryDirectory(memoryBacked: true)
            let store = try openStore(directory.store, durability: durability)
            for index in 0..<4 { try save(store, inserting: [try noteSnapshot("N\(index)")]) }
            // .none syncs only when it closes (and rolls); the others after each save.
            #expect(SyncedMark.read(directory: directory.store) == (durability == .none ? nil : 4), "\(durability)")
            store.close()
            #expect(SyncedMark.read(directory: directory.store) == 4, "\(durability)")
        }
    }

    @Test func aFailedOpenLeavesTheLockFileAsItWas() throws {
        let directory = try TemporaryDirectory(memoryBacked: true)
        let history = try RecordedHistory(in: directory.store)
        let segment = file(directory.store, history.segment)
        var damaged = try bytes(of: segment)
        damaged[history.boundaries[2] + 14] ^= 0x10
        try Data(damaged).write(to: segment)
        let lock = file(directory.store, "lock")
        try Data("pid 4242\n".utf8).write(to: lock)
        expectError(.corrupted) { try openStore(directory.store) }
        #expect(try String(contentsOf: lock, encoding: .utf8) == "pid 4242\n")
    }

    @Test func eachFormatVersionCaseHasOneCodeAndWording() throws {
        let cases: [(version: Int64, code: DataStoreError.Code, wording: String)] = [
            (2, .unsupportedFeature, "newer than this version of ModelStore reads"),
            (0, .corrupted, "which no version of ModelStore writes"),
            (-1, .corrupted, "which no version of ModelStore writes"),
        ]
        for (version, code, wording) in cases {
            // The manifest.
            let directory = try TemporaryDirectory(memoryBacked: true)
            _ = try RecordedHistory(in: directory.store)
            let manifest = file(directory.store, "manifest")
            var text = try String(contentsOf: manifest, encoding: .utf8)
            text = text.replacingOccurrences(of: "format 1\n", with: "format \(version)\n")
            let body = String(text[..<text.range(of: "crc32c ")!.lowerBound])
            text = body + "crc32c \(String(CRC32C.checksum(Array(body.utf8)), radix: 16))\n"
            try Data(text.utf8).write(to: manifest)
            let error = try #require(throws: DataStoreError.self) { try openStore(directory.store) }
            #expect(error.code == code, "manifest format \(version): \(error)")
            #expect(error.message.contains(wording), "manifest format \(version): \(error)")
            #expect(try AppendLogStore.verify(at: directory.store).problems.count == 1)
            guard version >= 0 else { continue }
            // A segment's header (versions are unsigned there).
            let other = try TemporaryDirectory(memoryBacked: true)
            let history = try RecordedHistory(in: other.store)
            let segment = file(other.store, history.segment)
            var bytes = try bytes(of: segment)
            rewriteHeaderVersion(&bytes, to: UInt8(version))
            try Data(bytes).write(to: segment)
            let segmentError = try #require(throws: DataStoreError.self) { try openStore(other.store) }
            #expect(segmentError.code == code, "segment format \(version): \(segmentError)")
            #expect(segmentError.message.contains(wording), "segment format \(version): \(segmentError)")
            #expect((segmentError.underlyingError as? AppendLogDamage)?.file == history.segment)
        }
    }

    /// Sets the format version (the first payload byte of the header frame after the 8-byte
    /// signature) and fixes the frame's checksums, so only the version is wrong.
    private func rewriteHeaderVersion(_ bytes: inout [UInt8], to version: UInt8) {
        let frame = 8
        let length = Int(bytes[frame]) | Int(bytes[frame + 1]) << 8 | Int(bytes[frame + 2]) << 16
        bytes[frame + 12] = version
        func put(_ value: UInt32, at offset: Int) {
            for index in 0..<4 { bytes[offset + index] = UInt8(truncatingIfNeeded: value >> (8 * index)) }
        }
        put(CRC32C.checksum(Array(bytes[(frame + 12)..<(frame + 12 + length)])), at: frame + 4)
        put(CRC32C.checksum(Array(bytes[frame..<(frame + 8)])), at: frame + 8)
    }
}
