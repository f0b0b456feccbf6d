import Foundation
import ModelStore
import ModelStoreAppendLog
import ModelStoreConformance
import ModelStoreCrypto
import ModelStoreFileIO
import ModelStoreTestSupport
import Testing

extension ConformanceAdapter {
    /// The append log encrypted with a key the app holds: the whole suite again.
    static let encryptedAppendLog = ConformanceAdapter(
        name: "AppendLogStore (encrypted)",
        capabilities: ConformanceAdapter.appendLog.capabilities
    ) { directory in
        var configuration = AppendLogStoreConfiguration(directory: directory.appendingPathComponent("store.log"))
        configuration.encryption = .key(AppendLogEncryptionTests.key)
        return configuration
    }
}

/// The conformance suite on an encrypted append log.
struct EncryptedAppendLogConformanceTests {
    @Test(arguments: ConformanceSuite.cases(for: .encryptedAppendLog))
    func conformance(_ testCase: ConformanceCase) throws {
        switch try testCase.run() {
        case .passed: break
        case .skipped(let reason): try Test.cancel(Comment(rawValue: reason))
        case .expectedFailure(let reason, let failure): withKnownIssue(Comment(rawValue: reason)) { throw failure }
        }
    }
}

/// An encrypted append log: records sealed one by one, nothing readable in the files, and every
/// wrong way to open it a typed error that leaves the files as they were.
struct AppendLogEncryptionTests {
    static let key = try! EncryptionKey(bytes: (0..<32).map { UInt8(255 - $0) })
    private let directory: TemporaryDirectory

    init() throws {
        directory = try TemporaryDirectory()
    }

    private func open(
        _ encryption: EncryptionKeySource? = .key(AppendLogEncryptionTests.key), segmentSize: Int = 64 << 20
    ) throws -> AppendLogStore {
        var configuration = AppendLogStoreConfiguration(
            directory: directory.store, durability: .everySave, compaction: .manual, segmentSize: segmentSize,
            schema: noteSchema)
        configuration.encryption = encryption
        return try AppendLogStore(configuration, migrationPlan: nil)
    }

    /// Saves three notes in three transactions; returns the segment's size after each.
    @discardableResult
    private func fill(_ store: AppendLogStore) throws -> [Int] {
        var sizes: [Int] = []
        for title in ["Zanzibar", "Quokka", "Xylophone"] {
            try save(store, inserting: [try noteSnapshot(title, body: "body of " + title, code: "code-" + title)])
            sizes.append(FileIO.size(of: file(directory.store, "segment-00000001.mslog")))
        }
        return sizes
    }

    private func everyFile() throws -> [URL] {
        let enumerator = try #require(FileManager.default.enumerator(atPath: directory.store.path))
        return enumerator.compactMap { ($0 as? String).map { directory.store.appendingPathComponent($0) } }
            .filter { !FileIO.isDirectory($0) }
    }

    @Test func eachSaveAppendsOneSealedRecordAndNothingShowsInTheFiles() throws {
        let plainDirectory = try TemporaryDirectory()
        let plain = try openStore(plainDirectory.store)
        var plainSizes: [Int] = []
        for title in ["Zanzibar", "Quokka", "Xylophone"] {
            try save(plain, inserting: [try noteSnapshot(title, body: "body of " + title, code: "code-" + title)])
            plainSizes.append(FileIO.size(of: file(plainDirectory.store, "segment-00000001.mslog")))
        }
        let store = try open()
        let sizes = try fill(store)
        // Each save appends its record plus the nonce and tag: no rewrite of what was there.
        for index in 1..<sizes.count {
            #expect(sizes[index] - sizes[index - 1] == plainSizes[index] - plainSizes[index - 1] + AES256GCM.overhead)
        }
        _ = try store.compact()
        try save(store, inserting: [try noteSnapshot("Wombat")])
        store.close()
        // Words of five bytes or more: ciphertext is random, and holds a given two-byte sequence about once
        // in 65,536 bytes (the code prefix "C-", searched for here before, failed a run that way).
        for url in try everyFile() {
            let text = String(decoding: try Data(contentsOf: url), as: UTF8.self)
            for word in ["Zanzibar", "Quokka", "Xylophone", "Wombat", "body of", "code-"] {
                #expect(!text.contains(word), "'\(word)' shows in \(url.lastPathComponent)")
            }
        }
        let encryption = try String(contentsOf: file(directory.store, "encryption"), encoding: .utf8)
        #expect(encryption.hasPrefix("ModelStore encrypted log 1\naes-256-gcm kdf=none check="))
        let reopened = try open()
        let titles = try contents(of: reopened).values.compactMap { $0["title"] }.sorted()
        #expect(titles == ["\"Quokka\"", "\"Wombat\"", "\"Xylophone\"", "\"Zanzibar\""].sorted())
        let history = try reopened.transactions(after: nil)
        #expect(history.count == 4)
    }

    /// Runs `body`, which must throw a DataStoreError with `code`, and checks that no file changed.
    private func refused(
        _ code: DataStoreError.Code, sourceLocation: SourceLocation = #_sourceLocation, _ body: () throws -> Void
    ) throws -> DataStoreError {
        let before = try FileTree.snapshot(directory.store)
        let error = try #require(throws: DataStoreError.self, sourceLocation: sourceLocation) { try body() }
        #expect(error.code == code, "\(error)", sourceLocation: sourceLocation)
        #expect(try FileTree.snapshot(directory.store) == before, "a refused open changed the files")
        return error
    }

    @Test func aWrongKeyNoKeyOrAKeyForAPlainLogIsATypedErrorAndTheFilesAreUntouched() throws {
        try fill(try open())
        let wrong = try refused(.wrongKey) { _ = try open(.key(try EncryptionKey.random())) }
        #expect(wrong.message.contains(directory.store.standardizedFileURL.path))
        let missing = try refused(.keyRequired) { _ = try open(nil) }
        #expect(missing.message.contains("is encrypted, and no key was given"))
        _ = try refused(.keyRequired) { _ = try AppendLogStore.verify(at: directory.store) }
        _ = try refused(.wrongKey) { _ = try AppendLogStore.repair(at: directory.store, encryption: .passphrase("x")) }
        let plain = try TemporaryDirectory()
        try openStore(plain.store).close()
        var configuration = AppendLogStoreConfiguration(directory: plain.store, schema: noteSchema)
        configuration.encryption = .key(Self.key)
        let before = try FileTree.snapshot(plain.store)
        let error = try #require(throws: DataStoreError.self) {
            _ = try AppendLogStore(configuration, migrationPlan: nil)
        }
        #expect(error.code == .invalidConfiguration)
        #expect(try FileTree.snapshot(plain.store) == before)
    }

    @Test func aTamperedRecordWithAValidChecksumFailsAuthenticationAndIsReportedAsDamage() throws {
        let sizes = try fill(try open())
        let segment = file(directory.store, "segment-00000001.mslog")
        var bytes = try bytes(of: segment)
        // The second record starts where the first save ended: flip a ciphertext byte, then fix
        // the frame's CRC so that only authentication can tell.
        let start = sizes[0]
        let length = Int(bytes[start]) | Int(bytes[start + 1]) << 8 | Int(bytes[start + 2]) << 16
        bytes[start + 12 + 20] ^= 0x40
        let crc = CRC32C.checksum(Array(bytes[(start + 12)..<(start + 12 + length)]))
        withUnsafeBytes(of: crc.littleEndian) { bytes.replaceSubrange((start + 4)..<(start + 8), with: $0) }
        let headerCRC = CRC32C.checksum(Array(bytes[start..<(start + 8)]))
        withUnsafeBytes(of: headerCRC.littleEndian) { bytes.replaceSubrange((start + 8)..<(start + 12), with: $0) }
        try Data(bytes).write(to: segment)
        let error = try refused(.corrupted) { _ = try open() }
        #expect(error.message.contains("segment-00000001.mslog"), "\(error)")
        #expect(error.description.contains("fails authentication"), "\(error)")
        let verification = try AppendLogStore.verify(at: directory.store, encryption: .key(Self.key))
        #expect(verification.problems.first?.file == "segment-00000001.mslog")
        #expect(verification.problems.first?.offset == start)
        // Repair keeps the first transaction and sets the rest aside; the log then opens.
        let report = try AppendLogStore.repair(at: directory.store, encryption: .key(Self.key))
        #expect(report.setAside.count == 1)
        let repaired = try open()
        #expect(try contents(of: repaired).count == 1)
    }

    @Test func aRecordMovedToAnotherSegmentFailsAuthentication() throws {
        let store = try open(segmentSize: 4096)
        try save(store, inserting: [try noteSnapshot("first", body: String(repeating: "a", count: 3000))])
        try save(store, inserting: [try noteSnapshot("second", body: String(repeating: "b", count: 3000))])
        store.close()
        let one = try bytes(of: file(directory.store, "segment-00000001.mslog"))
        let twoURL = file(directory.store, "segment-00000002.mslog")
        let two = try bytes(of: twoURL)
        let oneHeader = try #require(headerEnd(of: one))
        let twoHeader = try #require(headerEnd(of: two))
        // Segment 2's record replaced by segment 1's: a valid frame, sealed for another segment.
        try Data(two.prefix(twoHeader) + one[oneHeader...]).write(to: twoURL)
        let error = try refused(.corrupted) { _ = try open(segmentSize: 4096) }
        #expect(error.description.contains("fails authentication"), "\(error)")
    }

    @Test func aTornEncryptedTailIsCutOffAsInAPlainLog() throws {
        let sizes = try fill(try open())
        let segment = file(directory.store, "segment-00000001.mslog")
        let whole = try bytes(of: segment)
        try Data(whole.prefix(sizes[1] + (sizes[2] - sizes[1]) / 2)).write(to: segment)
        // As after a crash before the third save's sync returned: its mark was never recorded.
        try FileManager.default.removeItem(at: file(directory.store, "synced"))
        let store = try open()
        #expect(store.tornTail?.offset == sizes[1])
        #expect(try contents(of: store).count == 2)
        try save(store, inserting: [try noteSnapshot("after the tear")])
        store.close()
        #expect(try contents(of: try open()).count == 3)
    }

    @Test func aPassphraseDerivesTheKeyOnceAndTheSameLogReopensWithIt() throws {
        try fill(try open(.passphrase("correct horse battery staple")))
        let encryption = try String(contentsOf: file(directory.store, "encryption"), encoding: .utf8)
        #expect(encryption.contains("kdf=scrypt n=32768 r=8 p=1 salt="))
        #expect(try contents(of: try open(.passphrase("correct horse battery staple"))).count == 3)
        _ = try refused(.wrongKey) { _ = try open(.passphrase("correct horse battery stapler")) }
    }

    /// The offset just after a segment's header frame.
    private func headerEnd(of bytes: [UInt8]) -> Int? {
        guard bytes.count >= 20 else { return nil }
        let length = Int(bytes[8]) | Int(bytes[9]) << 8 | Int(bytes[10]) << 16 | Int(bytes[11]) << 24
        return 8 + 12 + length
    }
}
