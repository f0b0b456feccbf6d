import Foundation
import ModelStore
import ModelStoreAdapterKit
import ModelStoreCrypto
import ModelStoreFileIO

extension AppendLogStore {
    /// Rewrites the append log in `directory` under another key: encrypts a plaintext log
    /// (`from` is `nil`), decrypts an encrypted one (`to` is `nil`), or changes its key.
    ///
    /// Every segment and checkpoint, live and in `history/`, is rewritten frame by frame into a new
    /// directory beside the log, flushed, and swapped with the log's directory in one atomic step
    /// (``FileIO/exchange(_:_:)``): a crash at any instant leaves the old log or the new one at the
    /// path, never a mix. The old directory is then removed. The models, the history and the store
    /// identifier are kept; history tokens (``AppendLogPosition``) name byte offsets, which change, so
    /// tokens taken before expire. A torn tail is left out, as opening would cut it off.
    ///
    /// Holds the log's lock throughout (``DataStoreError/Code/locked`` if a process has it open).
    /// Throws ``DataStoreError/Code/wrongKey`` or ``DataStoreError/Code/keyRequired`` for the old key,
    /// ``DataStoreError/Code/invalidConfiguration`` when the log is not in the state the call
    /// expects (encrypting an encrypted log), and ``DataStoreError/Code/corrupted`` for a damaged
    /// record (run ``repair(at:encryption:)`` first); the log is then as it was.
    ///
    /// - Parameter progress: Called with the bytes done and the total, after each file.
    public static func changeEncryption(
        at directory: URL, from old: EncryptionKeySource?, to new: EncryptionKeySource?,
        progress: (_ done: Int, _ total: Int) -> Void = { _, _ in }
    ) throws {
        let directory = directory.standardizedFileURL
        let layout = LogLayout(directory: directory)
        let listing = try layout.list()
        guard listing.hasManifest else {
            throw DataStoreError(
                .notFound, "'\(directory.path)' is not an append log: it has no manifest", remedy: "Check the path")
        }
        guard old != nil || new != nil else {
            throw DataStoreError(
                .invalidConfiguration, "no key was given for the append log '\(directory.path)'",
                remedy: "Give the current key in the store URL and the new one as an option")
        }
        let lock = try DirectoryLock.acquire(directory: directory)
        defer { withExtendedLifetime(lock) {} }
        let from = try LogCipher.unlock(directory: directory, source: old, hasManifest: true, creating: false)
        let permissions = FilePermissions.matching(fileAt: layout.manifestURL.path)
        let header = try new.map { try EncryptionHeader.create(for: $0) }
        let to = header.map { LogCipher(cipher: $0.cipher) }
        let staging = directory.deletingLastPathComponent().appendingPathComponent(
            "." + directory.lastPathComponent + ".rekey-" + String(UInt32.random(in: .min ... .max), radix: 16))
        do {
            try FileIO.createDirectory(staging.path, permissions: permissions)
            if let header {
                try write(
                    LogCipher.encoded(header.header), to: staging.appendingPathComponent(LogCipher.fileName),
                    permissions)
            }
            let files = try everyFile(in: directory)
            let total = files.reduce(0) { $0 + FileIO.size(of: directory.appendingPathComponent($1)) }
            var done = 0
            for relative in files {
                let source = directory.appendingPathComponent(relative)
                let destination = staging.appendingPathComponent(relative)
                try FileIO.createDirectory(destination.deletingLastPathComponent().path, permissions: permissions)
                let bytes = try OpenFile(source, writable: false).readAll()
                let name = source.lastPathComponent
                if name == LogCipher.fileName || name == DirectoryLock.fileName || name.hasSuffix(".tmp") {
                    // The new key's header is written above; the lock file is made empty below.
                } else if relative.hasPrefix(LogLayout.damagedDirectoryName + "/") {
                    try write(bytes, to: destination, permissions)
                } else if LogLayout.number(in: name, prefix: LogLayout.segmentPrefix, suffix: LogLayout.segmentSuffix)
                    != nil
                {
                    try write(
                        try reseal(bytes, name: relative, checkpoint: false, from: from, to: to), to: destination,
                        permissions)
                } else if LogLayout.number(
                    in: name, prefix: LogLayout.checkpointPrefix, suffix: LogLayout.checkpointSuffix) != nil
                {
                    try write(
                        try reseal(bytes, name: relative, checkpoint: true, from: from, to: to), to: destination,
                        permissions)
                } else {
                    try write(bytes, to: destination, permissions)
                }
                done += bytes.count
                progress(done, total)
            }
            try OpenFile(
                staging.appendingPathComponent(DirectoryLock.fileName), writable: true, create: true,
                permissions: permissions
            ).close()
            for folder in [LogLayout.historyDirectoryName, LogLayout.damagedDirectoryName]
            where FileIO.isDirectory(staging.appendingPathComponent(folder)) {
                try FileIO.syncDirectory(staging.appendingPathComponent(folder))
            }
            try FileIO.syncDirectory(staging)
            try FileIO.exchange(staging.path, directory.path)
        } catch {
            try? FileManager.default.removeItem(at: staging)
            if let damage = error as? AppendLogDamage { throw damage.error(directory: directory) }
            throw error
        }
        try FileIO.syncDirectory(directory.deletingLastPathComponent())
        // The old log, now at the staging name; a crash before this line leaves it there, unused.
        try? FileManager.default.removeItem(at: staging)
    }

    private static func write(_ bytes: [UInt8], to url: URL, _ permissions: FilePermissions) throws {
        try bytes.withUnsafeBytes { try FileIO.write($0, to: url.path, sync: true, permissions: permissions) }
    }

    /// The regular files under `directory`, by relative path.
    private static func everyFile(in directory: URL) throws -> [String] {
        guard let enumerator = FileManager.default.enumerator(atPath: directory.path) else { return [] }
        var files: [String] = []
        while let relative = enumerator.nextObject() as? String {
            if !FileIO.isDirectory(directory.appendingPathComponent(relative)) { files.append(relative) }
        }
        return files.sorted()
    }

    /// The bytes of a segment or checkpoint with every frame after its header opened with `from`
    /// (or read as plaintext) and sealed with `to` (or written as plaintext); a torn tail is left
    /// out. Throws ``AppendLogDamage`` for a frame that fails its checksum or authentication.
    static func reseal(
        _ bytes: [UInt8], name: String, checkpoint: Bool, from: LogCipher?, to: LogCipher?
    ) throws -> [UInt8] {
        let magic = checkpoint ? checkpointMagic : segmentMagic
        return try bytes.withUnsafeBytes { raw in
            func damage(_ offset: Int, _ reason: String) -> AppendLogDamage {
                AppendLogDamage(file: name, offset: offset, reason: reason)
            }
            guard raw.count >= magic.count, raw.prefix(magic.count).elementsEqual(magic),
                case .frame(let headerPayload, let headerEnd) = Frame.read(raw, at: magic.count)
            else { throw damage(0, "the file's header is missing or damaged") }
            let headerBytes = UnsafeRawBufferPointer(rebasing: raw[headerPayload])
            let data: (Int) -> [UInt8]
            do {
                if checkpoint {
                    let header = try CheckpointHeader.decode(headerBytes)
                    data = {
                        LogCipher.checkpointData(store: header.storeIdentifier, base: header.baseSegment, frame: $0)
                    }
                } else {
                    let header = try SegmentHeader.decode(headerBytes)
                    let sealing = LogCipher.segmentData(store: header.storeIdentifier, segment: header.number)
                    data = { _ in sealing }
                }
            } catch let error as FormatError {
                throw error.damage(file: name, at: magic.count, what: "the header")
            }
            var output = ByteWriter(capacity: bytes.count + 4096)
            output.append(raw: raw[..<headerEnd])
            var offset = headerEnd
            var index = 0
            reading: while true {
                switch Frame.read(raw, at: offset) {
                case .frame(let payload, let end):
                    let plaintext: [UInt8]
                    if let from {
                        guard let opened = from.open(raw, payload: payload, associatedData: data(index)) else {
                            throw damage(offset, SegmentScanner.unauthenticated)
                        }
                        plaintext = opened
                    } else {
                        plaintext = Array(raw[payload])
                    }
                    let start = Frame.begin(&output)
                    if let to {
                        try plaintext.withUnsafeBytes { text in
                            try data(index).withUnsafeBytes {
                                try to.cipher.seal(text, associatedData: $0, appendingTo: &output.bytes)
                            }
                        }
                    } else {
                        output.append(raw: plaintext)
                    }
                    try Frame.finish(&output, at: start)
                    index += 1
                    offset = end
                case .end, .incompleteHeader, .incompletePayload:
                    break reading
                case .damagedHeader where raw[offset...].allSatisfy({ $0 == 0 }):
                    break reading
                case .damagedHeader, .damagedPayload:
                    throw damage(offset, "the record fails its checksum")
                }
            }
            return output.bytes
        }
    }
}
