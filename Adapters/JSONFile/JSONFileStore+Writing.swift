import Foundation
import ModelStore
import ModelStoreAdapterKit
import ModelStoreFileIO

extension JSONFileStore {
    /// Runs `change` on the current table and saves the table it returns, atomically.
    ///
    /// Holds the writers' lock and the file lock throughout. If another process saved since this
    /// store last read the file, the file is reloaded first and `change` gets the table from before
    /// the reload as `reloadedFrom`. `change` returns `nil` for "nothing to save". If anything
    /// throws, the file and the table stay as they were (apart from a reload, which is kept).
    func write<R>(
        _ change: (_ base: SnapshotTable, _ reloadedFrom: SnapshotTable?, _ state: inout WriterState) throws -> (
            SnapshotTable?, R
        )
    ) throws -> R {
        guard let fileLock else {
            throw DataStoreError.readOnly(store: paths.document, refusing: "a change")
        }
        return try writer.withLock { state in
            try fileLock.withLock(timeout: configuration.lockTimeout, document: paths.document) {
                let reloadedFrom = try reloadIfNeeded(&state)
                let base = table.withLock { $0 }
                var draft = state
                let (next, result) = try change(base, reloadedFrom, &draft)
                guard let next else { return result }
                let hook = saveStepHook.withLock { $0 }
                try Self.persist(
                    next, previous: base, state: &draft, identifier: identifier, schema: schema,
                    configuration: configuration, paths: paths, hook: hook)
                state = draft
                table.withLock { $0 = next }
                return result
            }
        }
    }

    /// Writes `next` as the whole document, atomically (see ``JSONFileStore``), and updates `state`.
    ///
    /// `previous` is the table the current file was written from: its external files are reused.
    static func persist(
        _ next: SnapshotTable, previous: SnapshotTable, state: inout WriterState, identifier: String, schema: Schema,
        configuration: JSONFileStoreConfiguration, paths: Paths, hook: (@Sendable (SaveStep) throws -> Void)?
    ) throws {
        func step(_ step: SaveStep) throws { try hook?(step) }
        let what = "saving the JSON store '\(paths.document)'"
        let plan: ExternalFiles.Plan
        do {
            plan = try state.externals.plan(for: next, previous: previous)
        } catch let error as DataStoreError where error.code == .io {
            throw error.inContext(what)
        }
        // A sealed document has no checksum (its AES-GCM tag authenticates every byte), and its
        // records are compact: no one reads it but the store.
        let encoder = DocumentEncoder(
            schema: schema, storeIdentifier: identifier, nextPrimaryKey: next.nextPrimaryKey,
            preserved: state.preserved, externalFiles: plan.names, history: state.history.encoded(),
            checksum: configuration.keys == nil, compact: configuration.keys != nil)
        let output = encoder.encode(next, capacity: state.documentSize)
        var committed = false
        do {
            try state.externals.write(plan)
            try step(.wroteExternalFiles)
            try output.withBytes { bytes in
                let document = UnsafeRawBufferPointer(bytes)
                if let keys = configuration.keys {
                    // Encrypted piece by piece as it is written: no sealed copy of the whole document.
                    try FileIO.write(
                        to: paths.temporary, sync: true, permissions: configuration.filePermissions,
                        contents: { try DocumentEncryption.seal(document, keys: keys, writingPiecesTo: $0) }
                    ) {
                        try step(.wroteTemporaryFile)
                    }
                } else {
                    try FileIO.write(
                        document, to: paths.temporary, sync: true, permissions: configuration.filePermissions
                    ) {
                        try step(.wroteTemporaryFile)
                    }
                }
            }
            try step(.syncedTemporaryFile)
            if configuration.keepsBackup, FileIO.exists(paths.document) {
                try FileIO.copy(
                    paths.document, to: paths.backupTemporary, permissions: configuration.filePermissions)
                try FileIO.rename(paths.backupTemporary, to: paths.backup)
            }
            try step(.keptBackup)
            try FileIO.rename(paths.temporary, to: paths.document)
            committed = true
            try step(.renamedDocument)
            try FileIO.syncDirectory(paths.folder)
            try step(.syncedDirectory)
        } catch let crash as SimulatedCrash {
            throw crash
        } catch {
            // Once the new file has replaced the old one the save has happened; a failed flush of
            // the folder cannot be undone, and the next save flushes it again.
            if !committed {
                try? FileIO.remove(paths.temporary)
                try? FileIO.remove(paths.backupTemporary)
                if let error = error as? DataStoreError, error.code == .io { throw error.inContext(what) }
                throw error
            }
        }
        let previousFiles = Set(state.externals.current.values)
        state.identity = try? FileIO.identity(of: paths.document)
        state.externals.current = plan.names
        state.documentSize = output.count
        var keeping = Set(plan.names.values)
        if configuration.keepsBackup { keeping.formUnion(previousFiles) }
        state.externals.removeUnreferenced(keeping: keeping)
        do {
            try step(.removedUnreferencedFiles)
        } catch let crash as SimulatedCrash {
            throw crash
        } catch {
            // The save has happened; see above.
        }
    }
}
