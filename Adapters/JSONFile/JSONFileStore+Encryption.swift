import Foundation
import ModelStore
import ModelStoreCrypto
import ModelStoreFileIO

extension JSONFileStore {
    /// Rewrites the JSON store at `url` under another key: encrypts a plaintext file (`from` is
    /// `nil`), decrypts an encrypted one (`to` is `nil`), or changes its key.
    ///
    /// Under the store's lock, the document is decrypted (which authenticates it) or read whole and
    /// checked against its checksum, then, in this order:
    ///
    /// 1. every `.externalStorage` file the document or its backup names is written again beside
    ///    itself under a new name (sealed under the new key, with a random name; or in the clear,
    ///    named by a hash of its bytes), each flushed, then the folder;
    /// 2. the document, with its `{"$file": …}` tags naming the new files and its checksum written
    ///    again (added, when a sealed document without one is decrypted), is sealed under the new key (or left plain) and replaces the old one atomically (a
    ///    flushed temporary file renamed over it): **the commit point**;
    /// 3. its `.backup` is rewritten the same way, so that no copy under the old key stays behind.
    ///    A backup that cannot be read is removed instead, before step 2: left behind by a run killed
    ///    after its commit point, it would be readable again after a change back to its key, naming
    ///    files of its own beside the document's;
    /// 4. the files neither the new document nor the new backup names (the old ones) are removed.
    ///
    /// A crash before step 2 leaves the old document, which names only old files, all still there;
    /// after it, the new document, which names only new ones. Files an interrupted run leaves behind
    /// are named by no document and go with the store's next save. The models, identifiers and
    /// history are the same, and so are the tokens.
    ///
    /// Throws ``DataStoreError/Code/wrongKey`` or ``DataStoreError/Code/keyRequired`` for the old key,
    /// ``DataStoreError/Code/invalidConfiguration`` when the file is not in the state the call
    /// expects, and ``DataStoreError/Code/corrupted`` when the document fails authentication (or,
    /// plain, does not match its checksum) or a file it names is missing or fails authentication;
    /// the store is then as it was.
    public static func changeEncryption(
        at url: URL, from old: EncryptionKeySource?, to new: EncryptionKeySource?,
        lockTimeout: Duration = .seconds(10), limits: JSONFileStoreConfiguration.Limits = .init(),
        progress: (_ done: Int, _ total: Int) -> Void = { _, _ in }
    ) throws {
        let paths = Paths(url)
        guard old != nil || new != nil else {
            throw DataStoreError(
                .invalidConfiguration, "no key was given for the JSON store '\(paths.document)'",
                remedy: "Give the current key in the store URL and the new one as an option")
        }
        let permissions = FilePermissions.matching(fileAt: paths.document)
        let lock = try FileLock(path: paths.lock, permissions: permissions)
        try lock.withLock(timeout: lockTimeout, document: paths.document) {
            let oldKeys = old.map(DocumentKeys.init)
            guard let document = try plainDocument(paths.document, limits: limits, keys: oldKeys, paths: paths) else {
                throw DataStoreError(
                    .notFound, "there is no JSON store at '\(paths.document)'", remedy: "Check the path")
            }
            // The previous version goes too if it cannot be read: never left under the old key.
            var backup = try? plainDocument(paths.backup, limits: limits, keys: oldKeys, paths: paths)
            let newKeys = new.map(DocumentKeys.init)
            var files = FileRenaming(
                folder: ExternalFiles(directory: paths.external, permissions: permissions),
                target: try newKeys?.current().cipher)
            defer { if !files.committed { files.removeWritten() } }
            let total = document.references.names.union(backup?.references.names ?? []).count + 1
            progress(0, total)
            do {
                for name in document.references.names.sorted() {
                    try files.convert(name, openedWith: document.cipher)
                    progress(files.renamed.count, total)
                }
                if let previous = backup {
                    do {
                        for name in previous.references.names.sorted() where files.renamed[name] == nil {
                            try files.convert(name, openedWith: previous.cipher)
                            progress(files.renamed.count, total)
                        }
                    } catch let error as DataStoreError where error.code != .io {
                        backup = nil
                    }
                }
                if !files.written.isEmpty { try FileIO.syncDirectory(paths.external) }
                if backup == nil {
                    try FileIO.remove(paths.backup)
                    try FileIO.syncDirectory(paths.folder)
                }
                try FileIO.writeAtomically(
                    try document.rewritten(renaming: files.renamed, keys: newKeys), to: paths.document,
                    permissions: permissions)
                files.committed = true
                if let backup {
                    try FileIO.writeAtomically(
                        try backup.rewritten(renaming: files.renamed, keys: newKeys), to: paths.backup,
                        permissions: permissions)
                }
                if FileIO.isDirectory(paths.external) {
                    let named = document.references.names.union(backup?.references.names ?? [])
                    files.folder.removeUnreferenced(keeping: Set(named.compactMap { files.renamed[$0] }))
                    try? FileIO.syncDirectory(paths.external)
                }
                progress(total, total)
            } catch let error as DataStoreError {
                throw error.inContext("re-encrypting the JSON store '\(paths.document)'")
            }
        }
    }

    /// The plaintext of the document (or backup) at `path`, authenticated (sealed) or checked against
    /// its checksum (plain), with the files it names and the cipher that opened it; `nil` if there is no file.
    private static func plainDocument(
        _ path: String, limits: JSONFileStoreConfiguration.Limits, keys: DocumentKeys?, paths: Paths
    ) throws -> PlainDocument? {
        guard let bytes = try FileIO.read(path, limit: limits.maximumFileSize)?.bytes else { return nil }
        var plaintext = bytes
        var cipher: AES256GCM?
        // A sealed document is authenticated by its tag; a checksum in it is not checked, and is
        // written again over the new bytes anyway.
        let sealed = DocumentEncryption.isEncrypted(bytes)
        if sealed {
            plaintext = try DocumentEncryption.open(bytes, document: path, keys: keys)
            // The cipher the open unlocked, which sealed the files this document names.
            cipher = try keys?.current().cipher
        } else if keys != nil {
            throw DocumentEncryption.notEncrypted(bytes, document: path)
        }
        let decoder = DocumentDecoder(
            schema: Schema([]), limits: limits.readLimits, fallbackStoreIdentifier: "",
            loadExternalFile: { _ in Data() })
        do {
            let header = try plaintext.withUnsafeBufferPointer { try decoder.decode($0, headerOnly: true) }.header
            if let checksum = header.checksum, !sealed {
                let actual = plaintext.withUnsafeBufferPointer {
                    DocumentChecksum.compute($0, excluding: checksum.contents)
                }
                if actual != checksum.value {
                    throw DocumentChecksum.mismatch(
                        expected: checksum.value, actual: actual, at: checksum.contents, document: path)
                }
            }
            return PlainDocument(
                bytes: plaintext, references: try ExternalFileReferences(plaintext, limits: limits.readLimits),
                checksum: header.checksum?.contents, cipher: cipher)
        } catch let error as JSONReadError {
            throw error.storeError(file: path, input: plaintext, backup: path == paths.document ? paths.backup : nil)
        }
    }
}

/// A document read for a change of key: its plaintext, the files it names, where its checksum is,
/// and the cipher that opened it (`nil` for a plaintext file).
private struct PlainDocument {
    var bytes: [UInt8]
    var references: ExternalFileReferences
    var checksum: Range<Int>?
    var cipher: AES256GCM?

    /// The file under `keys` (plain without), naming the files by their new names. A plain file
    /// always gets a checksum, which a sealed document does not have.
    func rewritten(renaming renamed: [String: String], keys: DocumentKeys?) throws -> [UInt8] {
        var plaintext = references.rewriting(bytes, renamed: renamed, checksum: checksum)
        guard let keys else {
            if checksum == nil {
                let contents = DocumentChecksum.insertPlaceholder(into: &plaintext)
                plaintext.withUnsafeMutableBufferPointer {
                    DocumentChecksum.fill($0.baseAddress!, count: $0.count, contents: contents)
                }
            }
            return plaintext
        }
        return try plaintext.withUnsafeBytes { try DocumentEncryption.seal($0, keys: keys) }
    }
}

/// The external files a change of key writes: each old file opened and written again under a new
/// name, sealed under `target` (random names) or in the clear (named by a hash of the bytes).
private struct FileRenaming {
    let folder: ExternalFiles
    let target: AES256GCM?
    /// The new name of each old file converted so far.
    var renamed: [String: String] = [:]
    /// The files this run created, which nothing names until the new document is in place.
    var written: [String] = []
    /// Whether the new document is in place (the files written are then its own).
    var committed = false

    /// Opens the file `name` with `cipher` and writes it again under a new name.
    mutating func convert(_ name: String, openedWith cipher: AES256GCM?) throws {
        let data: Data
        do {
            data = try folder.load(name, sealedWith: cipher)
        } catch let error as JSONReadError {
            throw DataStoreError(error.code, error.message, remedy: error.remedy)
        }
        let newName = try self.name(for: data)
        if !FileIO.exists(folder.directory + "/" + newName) {
            try folder.write(data, named: newName, sealedWith: target)
            written.append(newName)
        }
        renamed[name] = newName
    }

    /// A name no file has yet: random for sealed files; for plain ones the hash of the bytes (with a
    /// `-1`, `-2`… suffix past a file with other bytes), or the name of a file that already holds them.
    private func name(for data: Data) throws -> String {
        if target != nil {
            while true {
                let name = String(UInt64.random(in: .min ... .max), radix: 16) + ".bin"
                if !FileIO.exists(folder.directory + "/" + name) { return name }
            }
        }
        let hash = ExternalFiles.hash(data)
        var attempt = 0
        while true {
            let name = attempt == 0 ? "\(hash).bin" : "\(hash)-\(attempt).bin"
            attempt += 1
            guard let onDisk = try FileIO.read(folder.directory + "/" + name) else { return name }
            if onDisk.bytes.elementsEqual(data) { return name }
        }
    }

    /// Removes the files this run wrote.
    func removeWritten() {
        for name in written { try? FileIO.remove(folder.directory + "/" + name) }
    }
}
