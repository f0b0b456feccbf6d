import CModelStoreSQLiteCipher
import CModelStoreSQLiteRows
import CSQLite
import Foundation
import ModelStoreTestSupport
import Testing

/// The page cipher VFS on its own, through SQLite's C API: what reaches the disk (database, log,
/// journal) is sealed, reads back whole, and refuses a wrong key, a flipped byte and a moved page.
struct SQLiteCipherVFSTests {
    private let directory: TemporaryDirectory
    private let key: [UInt8] = (0..<32).map { UInt8(truncatingIfNeeded: $0 &* 11 &+ 3) }
    private let salt: [UInt8] = (0..<16).map { UInt8(truncatingIfNeeded: $0 &* 5 &+ 1) }
    private let secret = "Flux Capacitor 1.21 gigawatts"

    init() throws {
        directory = try TemporaryDirectory()
        #expect(modelstore_cipher_register() == SQLITE_OK)
    }

    private var path: String { directory.file("cipher.sqlite").path }

    /// A connection through the VFS with `key` (and `salt`), or plain without one.
    private func open(key: [UInt8]?, salt: [UInt8]? = nil, path: String? = nil) throws -> Connection {
        let path = path ?? self.path
        var identifier: Int32 = -1
        var uri = "file:" + path
        if let key {
            identifier = modelstore_cipher_key_add(key, salt ?? self.salt)
            uri += "?vfs=\(MODELSTORE_CIPHER_VFS)&\(MODELSTORE_CIPHER_KEY_PARAMETER)=\(identifier)"
        }
        var handle: OpaquePointer?
        let code = sqlite3_open_v2(uri, &handle, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_URI, nil)
        let connection = Connection(handle: try #require(handle), keyIdentifier: identifier)
        // Opening reads the header of page 1, so a key that does not open it fails here.
        guard code == SQLITE_OK else { throw Failure(code: sqlite3_extended_errcode(handle)) }
        if key != nil {
            var reserve: Int32 = MODELSTORE_CIPHER_RESERVE
            sqlite3_file_control(handle, "main", SQLITE_FCNTL_RESERVE_BYTES, &reserve)
            try connection.run("PRAGMA temp_store = MEMORY")
        }
        return connection
    }

    final class Connection {
        let handle: OpaquePointer
        let keyIdentifier: Int32

        init(handle: OpaquePointer, keyIdentifier: Int32) {
            self.handle = handle
            self.keyIdentifier = keyIdentifier
        }

        deinit {
            sqlite3_close_v2(handle)
            if keyIdentifier >= 0 { modelstore_cipher_key_remove(keyIdentifier) }
        }

        var message: String { String(cString: sqlite3_errmsg(handle)) }

        /// Runs `sql`; returns SQLite's extended result code.
        @discardableResult
        func code(_ sql: String) -> Int32 { sqlite3_exec(handle, sql, nil, nil, nil) }

        func run(_ sql: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
            let result = code(sql)
            try #require(result == SQLITE_OK, "\(sql): \(message)", sourceLocation: sourceLocation)
        }

        /// The first column of every row of `sql`, as text; throws SQLite's extended code on failure.
        func texts(_ sql: String) throws -> [String] {
            sqlite3_extended_result_codes(handle, 1)
            var statement: OpaquePointer?
            guard sqlite3_prepare_v2(handle, sql, -1, &statement, nil) == SQLITE_OK else {
                throw Failure(code: sqlite3_extended_errcode(handle))
            }
            defer { sqlite3_finalize(statement) }
            var rows: [String] = []
            while true {
                let step = sqlite3_step(statement)
                if step == SQLITE_DONE { return rows }
                guard step == SQLITE_ROW else { throw Failure(code: sqlite3_extended_errcode(handle)) }
                rows.append(sqlite3_column_text(statement, 0).map { String(cString: $0) } ?? "")
            }
        }
    }

    struct Failure: Error { let code: Int32 }

    /// A database of many pages with `secret` in every row, in `mode` (`WAL` or `DELETE`).
    private func fill(mode: String, rows: Int = 400) throws -> Connection {
        let connection = try open(key: key)
        try connection.run("PRAGMA journal_mode = \(mode)")
        try connection.run("CREATE TABLE gadget (id INTEGER PRIMARY KEY, name TEXT)")
        try connection.run("CREATE INDEX gadget_name ON gadget (name)")
        try connection.run("BEGIN")
        for row in 0..<rows {
            try connection.run("INSERT INTO gadget (name) VALUES ('\(secret) #\(row)')")
        }
        try connection.run("COMMIT")
        return connection
    }

    private func bytes(_ suffix: String = "") throws -> Data {
        try Data(contentsOf: URL(filePath: path + suffix))
    }

    private func showsSecret(_ data: Data) -> Bool {
        data.range(of: Data(secret.utf8.prefix(12))) != nil
    }

    @Test func theDatabaseAndItsLogAreSealedAndReadBack() throws {
        let connection = try fill(mode: "WAL")
        let log = try bytes("-wal")
        #expect(log.count > 32 + 24 + 4096)
        #expect(!showsSecret(log), "the secret shows in the log")
        try connection.run("PRAGMA wal_checkpoint(TRUNCATE)")
        let database = try bytes()
        #expect(database.count >= 4096 * 4)
        #expect(!showsSecret(database), "the secret shows in the database")
        #expect(database.prefix(16) == Data(salt), "the salt does not lead the file")
        #expect(database[20] == UInt8(MODELSTORE_CIPHER_RESERVE))
        try connection.run("INSERT INTO gadget (name) VALUES ('\(secret) late')")
        #expect(!showsSecret(try bytes("-wal")))
        let reader = try open(key: key)
        #expect(try reader.texts("SELECT count(*) FROM gadget") == ["401"])
        #expect(try reader.texts("SELECT name FROM gadget WHERE id = 7") == ["\(secret) #6"])
        #expect(try reader.texts("PRAGMA integrity_check") == ["ok"])
    }

    /// A checkpoint writes each page into the database as the log holds it, sealed: the pages are
    /// not sealed a second time, and they open there, since a page's sealing names its number and
    /// the database's salt, which the log shares.
    @Test func aCheckpointCopiesTheLogsSealedPagesIntoTheDatabase() throws {
        let connection = try fill(mode: "WAL")
        try connection.run("UPDATE gadget SET name = name || ' updated' WHERE id % 7 = 0")
        let log = try bytes("-wal")
        let pageSize = log[8..<12].reduce(0) { $0 << 8 | Int($1) }
        // Each page's last frame in the log: what a checkpoint writes into the database.
        var sealed: [Int: Data] = [:]
        var frame = 32
        while frame + 24 + pageSize <= log.count {
            let page = log[frame..<(frame + 4)].reduce(0) { $0 << 8 | Int($1) }
            sealed[page] = log[(frame + 24)..<(frame + 24 + pageSize)]
            frame += 24 + pageSize
        }
        #expect(sealed.count > 8, "the log holds \(sealed.count) pages")

        try connection.run("PRAGMA wal_checkpoint(TRUNCATE)")
        let database = try bytes()
        for (page, image) in sealed.sorted(by: { $0.key < $1.key }) {
            let start = (page - 1) * pageSize
            #expect(database[start..<(start + pageSize)] == image, "page \(page) was sealed again")
        }
        #expect(!showsSecret(database), "the secret shows in the database")
        let reader = try open(key: key)
        #expect(try reader.texts("SELECT count(*) FROM gadget WHERE name LIKE '% updated'") == ["57"])
        #expect(try reader.texts("PRAGMA integrity_check") == ["ok"])
    }

    /// A checkpoint copies each page's sealed image from the log without opening it. So a frame
    /// damaged on disk after it was written reaches the database as it is (opening each page would
    /// stop the checkpoint instead), and fails authentication when it is read there: damage is never
    /// read as data.
    @Test func aCheckpointCopiesPagesWithoutOpeningThem() throws {
        let connection = try fill(mode: "WAL")
        try connection.run("PRAGMA wal_checkpoint(TRUNCATE)")
        try connection.run("UPDATE gadget SET name = 'second' WHERE id % 7 = 0")
        var log = try bytes("-wal")
        let pageSize = log[8..<12].reduce(0) { $0 << 8 | Int($1) }
        var frames = 0
        var frame = 32
        while frame + 24 + pageSize <= log.count {
            log[frame + 24 + 100] ^= 0x40
            frames += 1
            frame += 24 + pageSize
        }
        #expect(frames > 8, "the log holds \(frames) frames")
        let handle = try FileHandle(forUpdating: URL(filePath: path + "-wal"))
        try handle.write(contentsOf: log)
        try handle.close()

        try connection.run("PRAGMA wal_checkpoint(TRUNCATE)")
        #expect(try bytes("-wal").isEmpty, "the checkpoint copied every frame")
        let reader = try open(key: key)
        let failure = try #require(throws: Failure.self) {
            _ = try reader.texts("SELECT count(*) FROM gadget WHERE name > ''")
            _ = try reader.texts("PRAGMA integrity_check")
        }
        #expect(failure.code == Int32(modelstore_cipher_auth_failed), "code \(failure.code)")
    }

    @Test func aRollbackJournalIsSealedAndRollsBack() throws {
        let connection = try fill(mode: "PERSIST")
        try connection.run("BEGIN")
        try connection.run("UPDATE gadget SET name = 'changed'")
        // The journal holds the pages as they were before the update, which hold the secret.
        let journal = try bytes("-journal")
        #expect(journal.count > 4096)
        #expect(!showsSecret(journal), "the secret shows in the journal")
        try connection.run("ROLLBACK")
        #expect(try connection.texts("SELECT count(*) FROM gadget WHERE name LIKE 'Flux%'") == ["400"])
        #expect(!showsSecret(try bytes()))
        #expect(try connection.texts("PRAGMA integrity_check") == ["ok"])
    }

    @Test func aHotJournalLeftByACrashIsRolledBackThroughTheCipher() throws {
        do {
            let connection = try fill(mode: "PERSIST")
            try connection.run("PRAGMA cache_size = 1")  // spills changed pages to the file before commit
            try connection.run("BEGIN")
            try connection.run("UPDATE gadget SET name = 'half done'")
            // A crash now: copy the files as they are, with the transaction half written.
            for suffix in ["", "-journal"] {
                try FileManager.default.copyItem(atPath: path + suffix, toPath: path + ".crash" + suffix)
            }
            try connection.run("ROLLBACK")
        }
        let recovered = try open(key: key, path: path + ".crash")
        #expect(try recovered.texts("SELECT count(*) FROM gadget WHERE name LIKE 'Flux%'") == ["400"])
        #expect(try recovered.texts("PRAGMA integrity_check") == ["ok"])
    }

    @Test func aWrongKeyReadsNothing() throws {
        _ = try fill(mode: "WAL")
        var other = key
        other[0] ^= 1
        let failure = try #require(throws: Failure.self) {
            _ = try open(key: other).texts("SELECT count(*) FROM gadget")
        }
        #expect(failure.code == Int32(modelstore_cipher_auth_failed))
        #expect(modelstore_cipher_check_key(path, other, salt) == Int32(modelstore_cipher_key_wrong))
        #expect(modelstore_cipher_check_key(path, key, salt) == Int32(modelstore_cipher_key_opens))
        var found = [UInt8](repeating: 0, count: 16)
        #expect(modelstore_cipher_classify(path, &found) == Int32(modelstore_cipher_file_encrypted))
        #expect(found == salt)
        // Without the VFS, SQLite sees no database.
        let plain = try open(key: nil)
        #expect(throws: Failure.self) { _ = try plain.texts("SELECT count(*) FROM gadget") }
    }

    @Test func aFlippedByteInAnyPageFailsAuthentication() throws {
        do {
            let connection = try fill(mode: "WAL")
            try connection.run("PRAGMA wal_checkpoint(TRUNCATE)")
        }
        let original = try bytes()
        let pages = original.count / 4096
        var rng = SplitMix64(seed: 46)
        for page in 0..<pages {
            var damaged = original
            // Past page 1's clear header; any byte of a page, its nonce and its tag included.
            let index = page * 4096 + 24 + rng.below(4096 - 24)
            damaged[index] ^= UInt8(1 << rng.below(8))
            try damaged.write(to: URL(filePath: path))
            let failure = try #require(throws: Failure.self, "page \(page + 1)") {
                let reader = try open(key: key)
                _ = try reader.texts("SELECT count(*) FROM gadget WHERE name > ''")
                _ = try reader.texts("PRAGMA integrity_check")
            }
            #expect(failure.code == Int32(modelstore_cipher_auth_failed), "page \(page + 1): code \(failure.code)")
        }
        // A changed page size or reserved-byte count in page 1's clear header is caught too.
        var header = original
        header[21] = 65
        try header.write(to: URL(filePath: path))
        #expect(throws: Failure.self) { _ = try open(key: key).texts("SELECT count(*) FROM gadget") }
    }

    /// Reads `count` bytes at `offset` straight through the VFS of `connection`'s database file into
    /// a buffer first filled with `0xA5`; returns the read's result code and the buffer.
    private func readThroughTheVFS(_ connection: Connection, offset: Int64, count: Int) throws -> (Int32, [UInt8]) {
        var pointer: UnsafeMutableRawPointer?
        try #require(sqlite3_file_control(connection.handle, "main", SQLITE_FCNTL_FILE_POINTER, &pointer) == SQLITE_OK)
        let file = try #require(pointer?.assumingMemoryBound(to: sqlite3_file.self))
        let read = try #require(file.pointee.pMethods?.pointee.xRead)
        var buffer = [UInt8](repeating: 0xA5, count: count)
        let code = buffer.withUnsafeMutableBytes { read(file, $0.baseAddress, Int32(count), offset) }
        return (code, buffer)
    }

    @Test func aPageThatFailsAuthenticationLeavesNoPlaintextBehind() throws {
        do {
            let connection = try fill(mode: "DELETE")
            try connection.run("PRAGMA journal_mode = DELETE")
        }
        let original = try bytes()
        // A page that holds the secret, as the VFS opens it.
        let page = try {
            let reader = try open(key: key)
            for page in 1..<(original.count / 4096) {
                let (code, plain) = try readThroughTheVFS(reader, offset: Int64(page * 4096), count: 4096)
                if code == SQLITE_OK && showsSecret(Data(plain)) { return page }
            }
            throw Failure(code: SQLITE_NOTFOUND)
        }()
        // The last byte of its tag flipped: every byte of the sealed text is intact, so GCM decrypts
        // it to the true plaintext before the tag fails.
        var damaged = original
        damaged[page * 4096 + 4095] ^= 0x01
        try damaged.write(to: URL(filePath: path))
        let reader = try open(key: key)
        // A whole page is opened in the caller's buffer, which is wiped; a part of one is opened in the
        // VFS's own buffer (wiped too, which this cannot see), and nothing of it reaches the caller.
        for (offset, count) in [(page * 4096, 4096), (page * 4096 + 100, 1000)] {
            let (code, buffer) = try readThroughTheVFS(reader, offset: Int64(offset), count: count)
            #expect(code == Int32(modelstore_cipher_auth_failed), "page \(page + 1) at \(offset): code \(code)")
            #expect(!showsSecret(Data(buffer)), "page \(page + 1) at \(offset): the plaintext was left in the buffer")
        }
    }

    @Test func aPageMovedToAnotherPlaceOrFileFailsAuthentication() throws {
        do {
            let connection = try fill(mode: "WAL")
            try connection.run("PRAGMA wal_checkpoint(TRUNCATE)")
        }
        let original = try bytes()
        var swapped = original
        swapped.replaceSubrange(4096 * 2..<4096 * 3, with: original[4096 * 3..<4096 * 4])
        try swapped.write(to: URL(filePath: path))
        #expect(throws: Failure.self) { _ = try open(key: key).texts("PRAGMA integrity_check") }
        // The same page number from a file with the same key and another salt.
        try original.write(to: URL(filePath: path))
        let otherPath = directory.file("other.sqlite").path
        do {
            let other = try open(key: key, salt: [UInt8](repeating: 9, count: 16), path: otherPath)
            try other.run("CREATE TABLE gadget (id INTEGER PRIMARY KEY, name TEXT)")
            try other.run("INSERT INTO gadget (name) VALUES ('x')")
        }
        var grafted = original
        let foreign = try Data(contentsOf: URL(filePath: otherPath))
        grafted.replaceSubrange(4096..<8192, with: foreign[4096..<8192])
        try grafted.write(to: URL(filePath: path))
        #expect(throws: Failure.self) { _ = try open(key: key).texts("SELECT count(*) FROM gadget") }
    }

    @Test func aFlippedByteInACommittedLogFrameIsNotRead() throws {
        do {
            let connection = try fill(mode: "WAL", rows: 40)
            try connection.run("PRAGMA wal_checkpoint(TRUNCATE)")
            try connection.run("UPDATE gadget SET name = 'second'")
            // The log and database as a killed process leaves them (no checkpoint at close).
            for suffix in ["", "-wal"] {
                try FileManager.default.copyItem(atPath: path + suffix, toPath: path + ".copy" + suffix)
            }
        }
        // Intact, the copy's log is recovered (its masked frame checksums read back as SQLite wrote them).
        for suffix in ["", "-wal"] {
            try FileManager.default.copyItem(atPath: path + ".copy" + suffix, toPath: path + ".intact" + suffix)
        }
        let intact = try open(key: key, path: path + ".intact")
        #expect(try intact.texts("SELECT count(*) FROM gadget WHERE name = 'second'") == ["40"])
        var log = try Data(contentsOf: URL(filePath: path + ".copy-wal"))
        log[32 + 24 + 100] ^= 0x40
        try log.write(to: URL(filePath: path + ".copy-wal"))
        // Recovery stops at the first frame that fails (as SQLite's does at a bad checksum): the update
        // is not applied, and no unauthenticated page is read.
        let reader = try open(key: key, path: path + ".copy")
        #expect(try reader.texts("SELECT count(*) FROM gadget WHERE name = 'second'") == ["0"])
        #expect(try reader.texts("PRAGMA integrity_check") == ["ok"])
    }

    @Test func theLogCheckTellsDamageBeforeCommittedFramesFromAnUnfinishedEnd() throws {
        let connection = try fill(mode: "WAL", rows: 40)
        try connection.run("PRAGMA wal_checkpoint(TRUNCATE)")
        try connection.run("UPDATE gadget SET name = 'second'")
        try connection.run("UPDATE gadget SET name = 'third'")
        let log = [UInt8](try bytes("-wal"))
        func damage(_ log: [UInt8]) -> Int64 {
            modelstore_cipher_wal_damage(connection.keyIdentifier, log, Int64(log.count))
        }
        #expect(damage(log) == -1, "an intact log")
        let pageSize = Int(log[8]) << 24 | Int(log[9]) << 16 | Int(log[10]) << 8 | Int(log[11])
        let frame = 24 + pageSize
        #expect(log.count >= 32 + 4 * frame, "both updates wrote frames")
        // A changed byte in a page of the first frame: the later frames are committed work.
        var flipped = log
        flipped[32 + 24 + 100] ^= 0x40
        #expect(damage(flipped) == 32)
        // A changed masked checksum of the second frame: the page authenticates, the chain breaks.
        var checksum = log
        checksum[32 + frame + 17] ^= 0x01
        #expect(damage(checksum) == Int64(32 + frame))
        // The last frame cut short is what a killed writer leaves: not damage.
        #expect(damage(Array(log.prefix(log.count - 100))) == -1)
        var header = log
        header[12] ^= 0x01
        #expect(damage(header) == 0, "a log header that fails its checksum")
        // Another key reads no frame of the log as good: damage at the first.
        let other = modelstore_cipher_key_add(Array(key.reversed()), salt)
        defer { modelstore_cipher_key_remove(other) }
        #expect(modelstore_cipher_wal_damage(other, log, Int64(log.count)) == 32)
    }

    /// A connection opens page 1 once and gives the kept plaintext to SQLite's later reads of it (as it
    /// opens a database, SQLite reads page 1 three times), but only for the sealed bytes it opened: a page
    /// changed on disk afterwards is authenticated anew, and fails.
    @Test func aPageOneChangedAfterAConnectionOpenedItFailsAuthentication() throws {
        let connection = try fill(mode: "DELETE", rows: 40)
        // Outside WAL mode SQLite reads page 1's change counter as every read transaction starts.
        #expect(try connection.texts("SELECT count(*) FROM gadget") == ["40"])
        #expect(try connection.texts("SELECT count(*) FROM gadget") == ["40"])
        func flip(_ offset: UInt64) throws {
            let handle = try FileHandle(forUpdating: URL(filePath: path))
            defer { try? handle.close() }
            try handle.seek(toOffset: offset)
            var byte = try #require(try handle.read(upToCount: 1))
            byte[0] ^= 0x10
            try handle.seek(toOffset: offset)
            try handle.write(contentsOf: byte)
        }
        // A byte past page 1's clear header: in the schema, which SQLite does not read again.
        try flip(300)
        let failure = try #require(throws: Failure.self) { _ = try connection.texts("SELECT count(*) FROM gadget") }
        #expect(failure.code == Int32(modelstore_cipher_auth_failed), "code \(failure.code)")
        // Put back, the page authenticates again.
        try flip(300)
        #expect(try connection.texts("SELECT count(*) FROM gadget") == ["40"])
    }

    /// The check of a registered key keeps the first page it opened, and a connection opened with the key
    /// starts from it: while the file holds the same sealed bytes, and no longer once they change.
    @Test func aPageOneChangedAfterTheKeyCheckFailsAuthentication() throws {
        _ = try fill(mode: "DELETE", rows: 40)
        let identifier = modelstore_cipher_key_add(key, salt)
        defer { modelstore_cipher_key_remove(identifier) }
        let uri = "file:\(path)?vfs=\(MODELSTORE_CIPHER_VFS)&\(MODELSTORE_CIPHER_KEY_PARAMETER)=\(identifier)"
        func count() throws -> [String] {
            var handle: OpaquePointer?
            let code = sqlite3_open_v2(uri, &handle, SQLITE_OPEN_READWRITE | SQLITE_OPEN_URI, nil)
            // Closes the handle; the key stays registered.
            let connection = Connection(handle: try #require(handle), keyIdentifier: -1)
            guard code == SQLITE_OK else { throw Failure(code: sqlite3_extended_errcode(connection.handle)) }
            return try connection.texts("SELECT count(*) FROM gadget")
        }
        #expect(modelstore_cipher_check_registered_key(path, identifier) == Int32(modelstore_cipher_key_opens))
        #expect(try count() == ["40"])
        // Changed after the check: the kept page is not given for other bytes.
        let original = try bytes()
        var damaged = original
        damaged[300] ^= 0x10
        try damaged.write(to: URL(filePath: path))
        let failure = try #require(throws: Failure.self) { try count() }
        #expect(failure.code == Int32(modelstore_cipher_auth_failed), "code \(failure.code)")
        // The check now finds the damage (the second page opens), and the page it kept is still not given.
        #expect(
            modelstore_cipher_check_registered_key(path, identifier) == Int32(modelstore_cipher_key_page_damaged))
        #expect(throws: Failure.self) { try count() }
        try original.write(to: URL(filePath: path))
        #expect(try count() == ["40"])
        var other = key
        other[0] ^= 1
        let wrong = modelstore_cipher_key_add(other, salt)
        defer { modelstore_cipher_key_remove(wrong) }
        #expect(modelstore_cipher_check_registered_key(path, wrong) == Int32(modelstore_cipher_key_wrong))
    }

    /// The 12-byte nonce of every frame in the log `log` (4,096-byte pages), in the order of the frames.
    private func frameNonces(_ log: Data) -> [[UInt8]] {
        let frame = 24 + 4096
        return stride(from: 32, to: log.count - frame + 1, by: frame).map { start in
            Array(log[start + 24 + 4096 - 28..<start + 24 + 4096 - 16])
        }
    }

    /// Whether `next` is `nonce` counted up by one: the same first 4 bytes, the last 8 one more.
    private func follows(_ next: [UInt8], _ nonce: [UInt8]) -> Bool {
        func counter(_ bytes: [UInt8]) -> UInt64 { bytes[4...].reduce(0) { $0 << 8 | UInt64($1) } }
        return next[..<4] == nonce[..<4] && counter(next) == counter(nonce) &+ 1
    }

    /// Each sealing of a page gets a new nonce, the same page sealed again included: a file counts up from
    /// a random start of its own, so two connections (as two processes) never continue each other's run.
    @Test func everyPageWriteHasANewNonceAndEachConnectionItsOwnRun() throws {
        let first = try fill(mode: "WAL", rows: 40)
        try first.run("PRAGMA wal_checkpoint(TRUNCATE)")
        for round in 0..<3 { try first.run("UPDATE gadget SET name = 'first \(round)' WHERE id = 7") }
        let firstFrames = frameNonces(try bytes("-wal")).count
        #expect(firstFrames >= 3)
        let second = try open(key: key)
        for round in 0..<3 { try second.run("UPDATE gadget SET name = 'second \(round)' WHERE id = 7") }
        let log = try bytes("-wal")
        let nonces = frameNonces(log)
        #expect(nonces.count > firstFrames)
        #expect(Set(nonces).count == nonces.count, "a nonce repeats in the log")
        // The row's page was sealed in every update, each time with another nonce.
        let pages = stride(from: 32, to: log.count - 4120 + 1, by: 4120).map { start in
            log[start..<start + 4].reduce(0) { $0 << 8 | Int($1) }
        }
        #expect(Dictionary(grouping: pages, by: { $0 }).values.contains { $0.count >= 6 }, "pages \(pages)")
        // Within a connection's log file the nonces count up by one; the second starts a run of its own.
        for index in 1..<nonces.count where index != firstFrames {
            #expect(follows(nonces[index], nonces[index - 1]), "frame \(index)")
        }
        #expect(!follows(nonces[firstFrames], nonces[firstFrames - 1]))
        #expect(try second.texts("SELECT name FROM gadget WHERE id = 7") == ["second 2"])
    }

    @Test func aPageOneWithoutRoomForTheTagIsNeverWritten() throws {
        var handle: OpaquePointer?
        let identifier = modelstore_cipher_key_add(key, salt)
        defer { modelstore_cipher_key_remove(identifier) }
        let uri = "file:\(path)?vfs=\(MODELSTORE_CIPHER_VFS)&\(MODELSTORE_CIPHER_KEY_PARAMETER)=\(identifier)"
        #expect(sqlite3_open_v2(uri, &handle, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_URI, nil) == 0)
        defer { sqlite3_close_v2(handle) }
        // No reserved bytes asked for: the first write is refused and nothing reaches the file.
        #expect(sqlite3_exec(handle, "CREATE TABLE t (x)", nil, nil, nil) != SQLITE_OK)
        #expect((try? bytes())?.count ?? 0 == 0)
    }
}
