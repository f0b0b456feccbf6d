import Foundation
import ModelStore
import ModelStoreAdapterKit
import ModelStoreCrypto
import ModelStoreFileIO

/// The values of `.externalStorage` attributes, kept as files in a folder beside the document.
///
/// Files are named by a hash of their bytes, so equal values share one file and an unchanged
/// value keeps its file from save to save. A file is written (and flushed) before any document
/// refers to it, and removed only once neither the document nor its backup refers to it.
struct ExternalFiles: Sendable {
    /// The folder, `<document>.external`.
    let directory: String
    /// The bits of the folder and files it creates.
    var permissions: FilePermissions = .private
    /// The keys of an encrypted store: each file is then sealed (with its name as associated data)
    /// and named at random, since a name made from a hash of the bytes would let anyone holding
    /// the files confirm a guess of a value.
    var keys: DocumentKeys?
    /// The file of each externally stored value that the current document refers to.
    var current: [ExternalSlot: String] = [:]

    /// The files a save writes: the name of every external value, and the bytes of the new files.
    struct Plan {
        var names: [ExternalSlot: String] = [:]
        var newFiles: [(name: String, data: Data)] = []
    }

    /// Names every externally stored value of `table`, reusing the file of each value that is
    /// unchanged since `previous` (the table the current document was written from).
    func plan(for table: SnapshotTable, previous: SnapshotTable) throws -> Plan {
        var plan = Plan()
        var known: [String: Data]?
        var planned: [String: Data] = [:]
        for entity in table.schema.entities {
            let slots = entity.attributes.filter { $0.options.contains(.externalStorage) }.map(\.slot)
            guard !slots.isEmpty else { continue }
            for snapshot in table.snapshots(of: entity.name) {
                for slot in slots {
                    guard case .data(let data) = snapshot.values[slot] else { continue }
                    let key = ExternalSlot(id: snapshot.persistentIdentifier, slot: slot)
                    if let name = current[key], case .data(let old)? = previous.snapshot(for: key.id)?.values[slot],
                        old == data
                    {
                        plan.names[key] = name
                        continue
                    }
                    if known == nil { known = knownContents(previous) }
                    plan.names[key] = try name(for: data, known: known!, planned: &planned, plan: &plan)
                }
            }
        }
        return plan
    }

    /// The bytes of the files the current document refers to, by name.
    private func knownContents(_ previous: SnapshotTable) -> [String: Data] {
        var known: [String: Data] = [:]
        for (key, name) in current {
            if case .data(let data)? = previous.snapshot(for: key.id)?.values[key.slot] { known[name] = data }
        }
        return known
    }

    /// The name of the file for `data`: its hash, with a suffix in the (unlikely) case that another
    /// file already has that name with other bytes.
    private func name(
        for data: Data, known: [String: Data], planned: inout [String: Data], plan: inout Plan
    ) throws -> String {
        let hash = keys == nil ? Self.hash(data) : String(UInt64.random(in: .min ... .max), radix: 16)
        var attempt = 0
        while true {
            let name = attempt == 0 ? "\(hash).bin" : "\(hash)-\(attempt).bin"
            attempt += 1
            if let existing = planned[name] ?? known[name] {
                if existing == data { return name }
                continue
            }
            let path = directory + "/" + name
            if keys == nil, let onDisk = try FileIO.read(path) {
                // A file no current record uses (the backup's, or left by an interrupted save).
                guard onDisk.bytes.elementsEqual(data) else { continue }
                planned[name] = data
                return name
            }
            planned[name] = data
            plan.newFiles.append((name, data))
            return name
        }
    }

    /// Writes the plan's new files, each through a temporary file, and flushes the folder.
    func write(_ plan: Plan) throws {
        guard !plan.newFiles.isEmpty else { return }
        if !FileIO.exists(directory) {
            try FileIO.createDirectory(directory, permissions: permissions)
            try FileIO.syncDirectory(FileIO.parent(of: directory))
        }
        let cipher = try keys?.current().cipher
        for file in plan.newFiles { try write(file.data, named: file.name, sealedWith: cipher) }
        try FileIO.syncDirectory(directory)
    }

    /// Writes one file through a temporary file, flushed (the folder is not), sealed under `cipher`
    /// (with its name as associated data) if there is one.
    func write(_ data: Data, named name: String, sealedWith cipher: AES256GCM?) throws {
        let path = directory + "/" + name
        let temporary = path + ".tmp"
        do {
            let bytes =
                try cipher.map { cipher in
                    try data.withUnsafeBytes { data in
                        try Array(name.utf8).withUnsafeBytes { name in
                            var sealed: [UInt8] = []
                            try cipher.seal(data, associatedData: name, appendingTo: &sealed)
                            return Data(sealed)
                        }
                    }
                } ?? data
            try bytes.withUnsafeBytes { try FileIO.write($0, to: temporary, sync: true, permissions: permissions) }
            try FileIO.rename(temporary, to: path)
        } catch {
            try? FileIO.remove(temporary)
            throw error
        }
    }

    /// Removes every file of the folder that is not in `keeping` (files of the document and of its backup).
    func removeUnreferenced(keeping: Set<String>) {
        for name in (try? FileIO.contents(of: directory)) ?? [] where !keeping.contains(name) {
            try? FileIO.remove(directory + "/" + name)
        }
    }

    /// The bytes of the file `name`; throws a ``JSONReadError`` (its offset is set by the caller).
    func load(_ name: String) throws -> Data {
        try load(name, sealedWith: try keys?.current().cipher)
    }

    /// The bytes of the file `name`, opened with `cipher` if there is one (the cipher of the document
    /// that names it); throws a ``JSONReadError``.
    func load(_ name: String, sealedWith cipher: AES256GCM?) throws -> Data {
        guard Self.isValidName(name) else {
            throw JSONReadError(
                offset: 0, message: "'\(name)' is not a valid external file name",
                remedy: "Use only the names ModelStore writes, such as '0123456789abcdef.bin'")
        }
        let path = directory + "/" + name
        let contents: (bytes: [UInt8], identity: FileIdentity)?
        do {
            contents = try FileIO.read(path)
        } catch let error as DataStoreError where error.code == .io {
            throw JSONReadError(offset: 0, message: error.inContext("reading an external value").message, code: .io)
        }
        guard let contents else {
            throw JSONReadError(
                offset: 0, message: "the external file '\(path)' is missing",
                remedy: "Restore the folder '\(directory)' from a backup, or set the property to another value by hand")
        }
        guard let cipher else { return Data(contents.bytes) }
        guard let data = cipher.open(contents.bytes, associatedData: Array(name.utf8)) else {
            throw JSONReadError(
                offset: 0, message: "the encrypted external file '\(path)' fails authentication: it was changed",
                remedy: "Restore the folder '\(directory)' from a backup together with the store's file")
        }
        return Data(data)
    }

    /// Names of files in the folder: no path separators, no leading dot.
    static func isValidName(_ name: String) -> Bool {
        guard !name.isEmpty, name.utf8.count <= 255, name.utf8.first != UInt8(ascii: ".") else { return false }
        return name.utf8.allSatisfy { byte in
            (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z"))
                || (byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z"))
                || (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9"))
                || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "_")
        }
    }

    /// A 64-bit hash of the bytes, as 16 hexadecimal digits; the same on every platform and run.
    static func hash(_ data: Data) -> String {
        var hash: UInt64 = 0x9E37_79B9_7F4A_7C15 ^ UInt64(data.count)
        data.withUnsafeBytes { raw in
            var index = 0
            while index + 8 <= raw.count {
                let word = UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: index, as: UInt64.self))
                hash = (hash ^ word) &* 0x0000_0100_0000_01B3
                hash ^= hash >> 29
                index += 8
            }
            while index < raw.count {
                hash = (hash ^ UInt64(raw[index])) &* 0x0000_0100_0000_01B3
                index += 1
            }
        }
        hash ^= hash >> 33
        hash = hash &* 0xFF51_AFD7_ED55_8CCD
        hash ^= hash >> 33
        hash = hash &* 0xC4CE_B9FE_1A85_EC53
        hash ^= hash >> 33
        let digits = String(hash, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }
}
