import Foundation
import ModelStore
import ModelStoreAdapterKit
import ModelStoreCrypto
import ModelStoreFileIO

/// What the writers of a store share: what they know about the file on disk.
struct WriterState: Sendable {
    /// The identity of the file as this store last read or wrote it.
    var identity: FileIdentity?
    /// The external files the file refers to.
    var externals: ExternalFiles
    /// Records of entities the schema doesn't have, written back unchanged.
    var preserved: [PreservedEntity] = []
    /// The size of the last document, to size the next one's buffer.
    var documentSize = 1 << 16
    /// The transactions the document keeps (``HistoryProviding``), and their encoded lines.
    var history = JSONFileHistory()
}

/// A document read from disk and loaded into a table.
struct LoadedDocument {
    var identifier: String
    var table: SnapshotTable
    var state: WriterState
    var header: DocumentHeader
}

extension JSONFileStore {
    /// Reads and checks the document, or returns `nil` if there is no file. Never writes.
    static func load(
        _ paths: Paths, schema: Schema, configuration: JSONFileStoreConfiguration
    ) throws -> LoadedDocument? {
        var file: (bytes: [UInt8], identity: FileIdentity)?
        do {
            file = try FileIO.read(paths.document, limit: configuration.limits.maximumFileSize)
        } catch let error as DataStoreError where error.code == .io {
            if error.fileIOCode == EFBIG {
                throw DataStoreError(
                    .corrupted,
                    "the JSON store '\(paths.document)' is larger than the limit of "
                        + "\(configuration.limits.maximumFileSize) bytes",
                    remedy: "Raise the configuration's 'maximumFileSize' limit if the file is genuine")
            }
            throw error.inContext("opening the JSON store '\(paths.document)'")
        }
        guard var bytes = file?.bytes, let identity = file?.identity else { return nil }
        file = nil
        // Where the document lies in `bytes`: all of a plaintext file; between the nonce and the tag of
        // an encrypted one, decrypted in the buffer it was read into (`file` let go of it, so it is
        // neither copied nor moved).
        var text = bytes.indices
        // An encrypted document is authenticated by its AES-GCM tag, which covers every byte the
        // checksum would: a checksum in it (earlier versions wrote one) is not computed again.
        let authenticated = DocumentEncryption.isEncrypted(bytes)
        if authenticated {
            text = try DocumentEncryption.decrypt(&bytes, document: paths.document, keys: configuration.keys)
        } else if configuration.keys != nil {
            throw DocumentEncryption.notEncrypted(bytes, document: paths.document)
        }
        let externals = ExternalFiles(
            directory: paths.external, permissions: configuration.filePermissions, keys: configuration.keys)
        let decoder = DocumentDecoder(
            schema: schema, limits: configuration.limits.readLimits,
            fallbackStoreIdentifier: "json-" + UUID().uuidString.prefix(8).lowercased(),
            loadExternalFile: { try externals.load($0) })
        var document: DecodedDocument
        do {
            document = try bytes.withUnsafeBufferPointer { try decoder.decode(UnsafeBufferPointer(rebasing: $0[text])) }
        } catch let error as JSONReadError {
            let backup = FileIO.exists(paths.backup) ? paths.backup : nil
            throw error.storeError(file: paths.document, input: Array(bytes[text]), backup: backup)
        } catch var error as DataStoreError {
            // What the table refused while the records were read into it.
            error.message = "cannot open the JSON store '\(paths.document)': \(error.message)"
            if error.remedy == nil { error.remedy = "Fix the file by hand, or restore its backup '\(paths.backup)'" }
            throw error
        }
        if let checksum = document.header.checksum, !authenticated, !configuration.acceptsHandEdits {
            let actual = bytes.withUnsafeBufferPointer {
                DocumentChecksum.compute(UnsafeBufferPointer(rebasing: $0[text]), excluding: checksum.contents)
            }
            if actual != checksum.value {
                throw DocumentChecksum.mismatch(
                    expected: checksum.value, actual: actual, at: checksum.contents, document: paths.document
                ).storeError(file: paths.document, input: Array(bytes[text]), backup: nil)
            }
        }
        if let next = document.header.nextPrimaryKey { document.table.reserveKeys(below: next) }
        var state = WriterState(externals: externals, preserved: document.preserved)
        state.history = try JSONFileHistory(
            document.header.historyJSON, limit: configuration.historyLimit, document: paths.document)
        state.identity = identity
        state.externals.current = document.externalFiles
        state.documentSize = text.count
        return LoadedDocument(
            identifier: document.header.storeIdentifier ?? decoder.fallbackStoreIdentifier,
            table: document.table, state: state, header: document.header)
    }

    /// Refuses files from a newer schema version: an old release never rewrites a newer one's data.
    static func checkVersion(_ header: DocumentHeader, schema: Schema, paths: Paths) throws {
        guard let stored = header.schemaVersion, stored > schema.version else { return }
        throw DataStoreError(
            .invalidSchema,
            "the JSON store '\(paths.document)' was written with schema version \(stored), newer than this app's "
                + "\(schema.version)",
            remedy: "Open it with the version of the app that wrote it")
    }

    /// Reloads the file if another process replaced it; returns the table from before the reload, or `nil`.
    ///
    /// Call it holding the writers' lock and the file lock.
    func reloadIfNeeded(_ state: inout WriterState) throws -> SnapshotTable? {
        let current: FileIdentity?
        do {
            current = try FileIO.identity(of: paths.document)
        } catch let error as DataStoreError where error.code == .io {
            throw error.inContext("checking the JSON store '\(paths.document)'")
        }
        // A missing file (deleted by hand) is written again from memory on the next save.
        guard let current, current != state.identity else { return nil }
        guard let loaded = try Self.load(paths, schema: schema, configuration: configuration) else { return nil }
        guard loaded.identifier == identifier else {
            throw DataStoreError(
                .conflict,
                "the JSON store '\(paths.document)' was replaced by a different store ('\(loaded.identifier)', not "
                    + "'\(identifier)')",
                remedy: "Open the file again with a new container")
        }
        let previous = table.withLock { table in
            let previous = table
            table = loaded.table
            return previous
        }
        state = loaded.state
        return previous
    }
}
