import Foundation
import ModelStore
import ModelStoreCrypto
import ModelStoreFileIO

/// The large values of `.externalStorage` attributes, kept as files in the folder
/// `<database>.external/` beside the database; the row's column holds the file's name as `TEXT`
/// where an inline value would be a `BLOB`.
///
/// - A value of at least ``inlineLimit`` bytes goes to a file; a smaller one stays in its column.
/// - A name is `<digest>-<nonce>.bin`: 16 hexadecimal digits of a digest of the bytes, then 16
///   random ones. Every write of a value makes a new file, so no two rows (and no two versions of
///   one row) share a file, and a file can be removed as soon as the row that named it no longer does.
/// - Files are written and flushed inside the save's write transaction, before it commits, so a
///   committed row never names a file that is not on disk. A save that fails removes the files it
///   wrote. The files of values that a save replaced or deleted are removed after its commit is
///   durable. A process killed between the two leaves files no row names: harmless, and removed by
///   ``SQLiteStore/compact()``.
/// - In an encrypted database each file is sealed on its own (AES-256-GCM, its name as associated
///   data, so a file renamed or swapped for another fails to open) under the database's file key
///   (``SQLiteConnection/externalFileCipher(creating:)``), behind the 4-byte signature `MSX1`; its
///   name is random, not made from a digest of the value.
struct ExternalValueFolder: Sendable {
    /// The first bytes of a sealed file.
    static let sealedSignature: [UInt8] = Array("MSX1".utf8)

    /// Values shorter than this stay in their column.
    static let inlineLimit = 16 * 1024

    /// The folder's path.
    let directory: String

    /// The bits of the database file, which the folder and its files take.
    private var permissions: FilePermissions {
        .matching(fileAt: String(directory.dropLast(".external".count)))
    }

    /// The folder of the database at `databasePath`; `nil` for an in-memory database, which keeps
    /// every value in its column.
    init?(databasePath: String) {
        guard databasePath != ":memory:", !databasePath.isEmpty else { return nil }
        directory = databasePath + ".external"
    }

    /// Whether a value goes to a file.
    static func isExternal(_ data: Data) -> Bool { data.count >= inlineLimit }

    /// Writes `data` to a new file, flushed, and returns its name; the folder itself is flushed by
    /// ``syncFolder()`` before the transaction that names the file commits. With `sealer` (an
    /// encrypted database), the file holds the sealed value.
    func store(_ data: Data, changes: ExternalFileChanges, sealer: AES256GCM? = nil) throws -> String {
        if !changes.checkedFolder {
            if !FileIO.isDirectory(directory) {
                // The folder and its files get the bits of the database file (as SQLite gives its
                // `-wal` and `-shm` files), so they are as private as the database.
                try FileIO.createDirectory(directory, permissions: permissions)
                try FileIO.syncDirectory(FileIO.parent(of: directory))
            }
            changes.checkedFolder = true
        }
        // A digest of a secret value would tell something about it: a sealed file's name is random.
        let digest = sealer == nil ? Self.digest(data) : Self.hex(UInt64.random(in: .min ... .max))
        let name = digest + "-" + Self.hex(UInt64.random(in: .min ... .max)) + ".bin"
        let path = directory + "/" + name
        let temporary = path + ".tmp"
        do {
            if let sealer {
                var contents = Self.sealedSignature
                try data.withUnsafeBytes { plaintext in
                    try Array(name.utf8).withUnsafeBytes { name in
                        try sealer.seal(plaintext, associatedData: name, appendingTo: &contents)
                    }
                }
                try contents.withUnsafeBytes {
                    try FileIO.write($0, to: temporary, sync: true, permissions: permissions)
                }
            } else {
                try data.withUnsafeBytes { try FileIO.write($0, to: temporary, sync: true, permissions: permissions) }
            }
            try FileIO.rename(temporary, to: path)
        } catch {
            try? FileIO.remove(temporary)
            throw error
        }
        changes.written.append(name)
        return name
    }

    /// Flushes the folder's entries, so the names of files written are on disk before the commit.
    func syncFolder() throws {
        try FileIO.syncDirectory(directory)
    }

    /// Whether the file `name` holds exactly `data` (the digest in the name is checked first, so a
    /// different value is rejected without reading the file; a sealed file is opened and compared).
    func holds(_ name: String, _ data: Data, sealer: AES256GCM? = nil) -> Bool {
        if let sealer {
            guard Self.isExternal(data), let contents = try? load(name, owner: "", sealer: sealer) else { return false }
            return contents == data
        }
        guard Self.isExternal(data), name.hasPrefix(Self.digest(data) + "-"),
            let contents = try? FileIO.read(directory + "/" + name, limit: data.count)
        else { return false }
        return contents.bytes.elementsEqual(data)
    }

    /// The bytes of the file `name`; `owner` describes the row for errors. With `sealer` (an
    /// encrypted database), the file must be sealed under it.
    func load(_ name: String, owner: @autoclosure () -> String, sealer: AES256GCM? = nil) throws -> Data {
        guard Self.isValidName(name) else {
            throw DataStoreError(
                .corrupted, "\(owner()) names the external file '\(name)', which is not a name the store writes",
                remedy: "Restore the database from a backup, or set the property to another value")
        }
        let path = directory + "/" + name
        guard let contents = try FileIO.read(path) else {
            throw DataStoreError(
                .corrupted,
                "the external file '\(path)' of \(owner()) is missing",
                remedy: "Restore the folder '\(directory)' from a backup together with the database; if another "
                    + "process saved the model at that moment, fetch it again")
        }
        guard let sealer else { return Data(contents.bytes) }
        let signature = Self.sealedSignature.count
        guard contents.bytes.count >= signature, contents.bytes.prefix(signature).elementsEqual(Self.sealedSignature)
        else {
            throw DataStoreError(
                .corrupted,
                "the external file '\(path)' of \(owner()) is not sealed, though the database is encrypted",
                remedy: "If the database was encrypted with 'modelstore encrypt' by an earlier ModelStore, copy it "
                    + "into a new encrypted store with 'modelstore convert'; otherwise restore the folder from a backup"
            )
        }
        let opened = contents.bytes.withUnsafeBytes { raw in
            Array(name.utf8).withUnsafeBytes { name in
                sealer.open(UnsafeRawBufferPointer(rebasing: raw[signature...]), associatedData: name)
            }
        }
        guard let opened else {
            throw DataStoreError(
                .corrupted,
                "the external file '\(path)' of \(owner()) fails authentication: it was changed, cut short, or "
                    + "moved from another name",
                remedy: "Restore the folder '\(directory)' from a backup together with the database")
        }
        return Data(opened)
    }

    /// Removes files by name; a file that cannot be removed stays, as one `compact()` removes later.
    func remove(_ names: some Sequence<String>) {
        for name in names where Self.isValidName(name) { try? FileIO.remove(directory + "/" + name) }
    }

    /// The names of the folder's files.
    func fileNames() throws -> [String] {
        try FileIO.contents(of: directory)
    }

    /// Names the store writes: `<16 hex>-<16 hex>.bin`.
    static func isValidName(_ name: String) -> Bool {
        let bytes = Array(name.utf8)
        guard bytes.count == 37, bytes[16] == UInt8(ascii: "-"), name.hasSuffix(".bin") else { return false }
        return (bytes[0..<16] + bytes[17..<33]).allSatisfy { byte in
            (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9"))
                || (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "f"))
        }
    }

    /// A 64-bit digest of the bytes (not cryptographic: a match is confirmed by comparing bytes),
    /// the same on every platform, as 16 hexadecimal digits.
    static func digest(_ data: Data) -> String {
        var low: UInt64 = 0x243F_6A88_85A3_08D3 &+ UInt64(data.count)
        var high: UInt64 = 0x1319_8A2E_0370_7344
        data.withUnsafeBytes { raw in
            var offset = 0
            while offset + 8 <= raw.count {
                let word = UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
                low = (low ^ word) &* 0xD6E8_FEB8_6659_FD93
                high = (high &+ word) ^ (low >> 23)
                offset += 8
            }
            var tail: UInt64 = 0
            var shift: UInt64 = 0
            while offset < raw.count {
                tail |= UInt64(raw[offset]) << shift
                shift += 8
                offset += 1
            }
            low = (low ^ tail) &* 0xD6E8_FEB8_6659_FD93
        }
        var mixed = low ^ (high &* 0x9E37_79B9_7F4A_7C15)
        mixed = (mixed ^ (mixed >> 31)) &* 0xBF58_476D_1CE4_E5B9
        mixed = (mixed ^ (mixed >> 27)) &* 0x94D0_49BB_1331_11EB
        return hex(mixed ^ (mixed >> 30))
    }

    private static func hex(_ value: UInt64) -> String {
        let digits = String(value, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }
}

/// The external files one write transaction wrote, and those whose values it replaced or
/// deleted: the first are removed if the transaction does not commit, the second once it has.
final class ExternalFileChanges {
    /// Files written for the transaction.
    var written: [String] = []
    /// Files the transaction's rows no longer name.
    var released: [String] = []
    /// Whether the folder is known to exist.
    var checkedFolder = false
    /// The cipher of an encrypted database's files, once the transaction has read (or made) its key.
    var sealer: AES256GCM??
}
