import Foundation
import ModelStore
import ModelStoreAdapterKit
import ModelStoreCrypto
import ModelStoreFileIO

/// One saved transaction, read back from the log: the history the store keeps.
public struct AppendLogTransaction: Sendable, Hashable {
    /// One change of a transaction.
    public enum Change: Sendable, Hashable {
        /// A model was inserted.
        case insert(PersistentIdentifier)
        /// A model's attributes or relationships changed; the names of those that did.
        case update(PersistentIdentifier, updatedProperties: [String])
        /// A model was deleted; its tombstone keeps the values of its `.preserveValueOnDeletion` attributes.
        case delete(PersistentIdentifier, tombstone: [String: StoreValue])
    }

    /// The transaction's position in the log: its token. Pass it to ``AppendLogStore/transactions(after:)``
    /// to read only what came later.
    public let token: AppendLogPosition
    /// The transaction's number (1 for the store's first).
    public let number: UInt64
    /// When it was saved.
    public let timestamp: Date
    /// The author of the context that saved it, if it had one.
    public let author: String?
    /// The store's identifier.
    public let storeIdentifier: String
    /// Its changes: deletes, then updates, then inserts.
    public let changes: [Change]
}

extension AppendLogStore {
    /// The position just after the last transaction: a token for reading only what comes next.
    public var currentPosition: AppendLogPosition {
        state.withLock { Self.end(of: $0) }
    }

    /// Where the log ends: the active segment's end, or for a read-only store (which has no active
    /// segment) the last segment's.
    private static func end(of state: LogState) -> AppendLogPosition {
        if let active = state.active { return AppendLogPosition(segment: active.number, offset: active.end) }
        return AppendLogPosition(
            segment: state.segments.last?.number ?? 0, offset: state.segments.last?.byteCount ?? 0)
    }

    /// The saved transactions after `token` (all of them when `nil`), oldest first, read from the
    /// log's segments and from `history/`.
    ///
    /// Throws ``DataStoreError/Code/notFound`` when `token` points into history that
    /// ``deleteHistory(before:)`` removed (the token has expired), and
    /// ``DataStoreError/Code/corrupted`` when a segment read is damaged.
    public func transactions(after token: AppendLogPosition? = nil) throws -> [AppendLogTransaction] {
        maintenance.lock()
        defer { maintenance.unlock() }
        let (live, end) = try state.withLock { state in
            try checkUsable(state)
            return (state.segments.map(\.number), Self.end(of: state))
        }
        let history = try layout.list().history
        return try Self.readTransactions(layout: layout, history: history, live: live, after: token, end: end)
    }

    /// The saved transactions of the append log in `directory`, read without opening it; see
    /// ``transactions(after:)``. A torn tail is not read.
    ///
    /// An encrypted log needs its key (`encryption`).
    public static func transactions(
        at directory: URL, after token: AppendLogPosition? = nil, encryption: EncryptionKeySource? = nil
    ) throws -> [AppendLogTransaction] {
        let cipher = try LogCipher.unlock(
            directory: directory.standardizedFileURL, source: encryption, hasManifest: true, creating: false)
        let layout = LogLayout(directory: directory.standardizedFileURL, cipher: cipher)
        let listing = try layout.list()
        guard listing.hasManifest else {
            throw DataStoreError(.notFound, "'\(layout.directory.path)' is not an append log: it has no manifest")
        }
        let manifest = try Manifest.decode(
            try OpenFile(layout.manifestURL, writable: false).readAll(), url: layout.manifestURL)
        let live = listing.segments.filter { $0 >= manifest.firstSegment }
        return try readTransactions(layout: layout, history: listing.history, live: live, after: token, end: nil)
    }

    /// Deletes the history segments wholly before `position`, and returns their file names.
    ///
    /// History is kept until this is called: compaction only moves segments into `history/`.
    /// Tokens that point into deleted segments expire. Segments the store still needs to open
    /// (those after the checkpoint) are never deleted.
    @discardableResult
    public func deleteHistory(before position: AppendLogPosition) throws -> [String] {
        guard configuration.allowsSave else {
            throw DataStoreError.readOnly(store: directory.path, refusing: "deleting history")
        }
        maintenance.lock()
        defer { maintenance.unlock() }
        try state.withLock { try checkUsable($0) }
        var deleted: [String] = []
        for number in try layout.list().history where number < position.segment {
            try FileIO.remove(layout.historyURL(number))
            deleted.append(LogLayout.historyDirectoryName + "/" + LogLayout.segmentName(number))
        }
        if !deleted.isEmpty { try FileIO.syncDirectory(layout.historyDirectory) }
        return deleted
    }

    private static func readTransactions(
        layout: LogLayout, history: [UInt64], live: [UInt64], after token: AppendLogPosition?, end: AppendLogPosition?
    ) throws -> [AppendLogTransaction] {
        let segments = (history.map { ($0, true) } + live.map { ($0, false) }).sorted { $0.0 < $1.0 }
        if let token, let first = segments.first?.0, token.segment < first {
            throw DataStoreError(
                .notFound,
                "the history token \(token) has expired: the history before segment \(first) of "
                    + "'\(layout.directory.path)' was deleted",
                remedy: "Read the history from the beginning (no token) and store the newest token")
        }
        var result: [AppendLogTransaction] = []
        for (index, (number, inHistory)) in segments.enumerated() where number >= (token?.segment ?? 0) {
            let url = inHistory ? layout.historyURL(number) : layout.segmentURL(number)
            var bytes = try OpenFile(url, writable: false).readAll()
            if let end, number == end.segment, bytes.count > end.offset { bytes.removeLast(bytes.count - end.offset) }
            let name = (inHistory ? LogLayout.historyDirectoryName + "/" : "") + LogLayout.segmentName(number)
            let scanner = SegmentScanner(
                name: name, number: number, isLast: index == segments.count - 1, storeIdentifier: nil,
                firstTransaction: nil, cipher: layout.cipher)
            do {
                _ = try scanner.scan(bytes) { record, offset, _, context in
                    let position = AppendLogPosition(segment: number, offset: offset)
                    if let token, position <= token { return }
                    result.append(transaction(record, position: position, context: context))
                }
            } catch let damage as AppendLogDamage {
                throw damage.error(directory: layout.directory)
            }
        }
        return result
    }

    private static func transaction(
        _ record: TransactionRecord, position: AppendLogPosition, context: IdentifierContext
    ) -> AppendLogTransaction {
        func names(_ change: StoredChange) -> [String] {
            guard let code = change.code else { return change.values.map { "#\($0.slot)" } }
            let properties = context.shapes.entities[code].properties
            return change.values.map { $0.slot < properties.count ? properties[$0.slot].name : "#\($0.slot)" }
        }
        var changes: [AppendLogTransaction.Change] = []
        for deleted in record.deleted {
            changes.append(
                .delete(
                    deleted.id,
                    tombstone: Dictionary(
                        zip(names(deleted), deleted.values.map(\.value)), uniquingKeysWith: { first, _ in first })))
        }
        for updated in record.updated { changes.append(.update(updated.id, updatedProperties: names(updated))) }
        for inserted in record.inserted { changes.append(.insert(inserted.id)) }
        return AppendLogTransaction(
            token: position, number: record.number, timestamp: record.timestamp, author: record.author,
            storeIdentifier: context.storeIdentifier, changes: changes)
    }
}

// MARK: - HistoryProviding

extension AppendLogStore: HistoryProviding {
    /// The name of the file in `history/` that records up to which transaction history was deleted.
    static let deletedThroughFileName = "deleted-through"

    /// The transactions `descriptor` selects, read from the log's segments and `history/`.
    ///
    /// Every transaction the log holds is read, so the cost grows with the history kept: delete
    /// history you no longer need.
    public func fetchHistory(
        _ descriptor: HistoryDescriptor<DefaultHistoryTransaction>
    ) throws -> [DefaultHistoryTransaction] {
        let (records, expiredThrough) = try historyRecords()
        return try StoreHistory.transactions(
            records, descriptor, schema: schema, storeIdentifier: identifier, expiredThrough: expiredThrough)
    }

    /// Deletes the transactions `descriptor` selects, which must be the oldest ones the log keeps
    /// (for example `#Predicate { $0.token <= token }`): a log deletes history from its start.
    ///
    /// Records the newest deleted transaction in `history/deleted-through` (written atomically), so
    /// they are never returned again and tokens into them expire, then removes the history
    /// segments that hold only deleted transactions.
    ///
    /// - Throws: ``DataStoreError/Code/unsupportedFeature`` when the selected transactions are not
    ///   the oldest ones (deleting by author, say), before anything is deleted.
    public func deleteHistory(_ descriptor: HistoryDescriptor<DefaultHistoryTransaction>) throws {
        let (records, _) = try historyRecords()
        let doomed = try StoreHistory.transactions(
            records, descriptor, schema: schema, storeIdentifier: identifier, expiredThrough: 0)
        guard let newest = doomed.map(\.token.transactionNumber).max() else { return }
        let olderOrSame = records.lazy.filter { $0.number <= newest }.count
        guard olderOrSame == doomed.count else {
            throw DataStoreError(
                .unsupportedFeature,
                "the append log '\(directory.path)' deletes history only from its oldest transaction on, and the "
                    + "descriptor selects \(doomed.count) of the \(olderOrSame) transactions up to \(newest)",
                remedy: "Delete by token, for example #Predicate { $0.token <= token }")
        }
        try expireHistory(through: newest)
    }

    /// Deletes history through the transaction numbered `newest`: records it in
    /// `history/deleted-through` (atomically), so those transactions are never returned again and
    /// tokens into them expire, then removes the history segments that hold only deleted transactions.
    func expireHistory(through newest: Int64) throws {
        let marker = layout.historyDirectory.appendingPathComponent(Self.deletedThroughFileName).path
        try FileIO.createDirectory(layout.historyDirectory.path, permissions: layout.permissions)
        try FileIO.writeAtomically(Array("\(newest)\n".utf8), to: marker, permissions: layout.permissions)
        let positions = try transactions(after: nil)
        if let firstKept = positions.first(where: { Int64($0.number) > newest }) {
            try deleteHistory(before: firstKept.token)
        } else {
            try deleteHistory(before: currentPosition)
        }
    }

    /// The transactions after the deleted-through mark, and the highest number that is gone.
    private func historyRecords() throws -> (records: [StoreHistoryRecord], expiredThrough: Int64) {
        let mark = try deletedThrough()
        let all = try transactions(after: nil)
        // Segments deleted before the mark existed leave a gap at the start too.
        let missingBefore = all.first.map { Int64($0.number) - 1 } ?? 0
        let records = all.lazy.filter { Int64($0.number) > mark }.map(Self.record(of:))
        return (Array(records), max(mark, missingBefore))
    }

    /// The number recorded in `history/deleted-through`, or 0 without one.
    private func deletedThrough() throws -> Int64 {
        let marker = layout.historyDirectory.appendingPathComponent(Self.deletedThroughFileName).path
        guard let (bytes, _) = try FileIO.read(marker, limit: 64) else { return 0 }
        let text = String(decoding: bytes, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        guard let number = Int64(text), number >= 0 else {
            throw DataStoreError(
                .corrupted, "'\(marker)' does not hold a transaction number",
                remedy: "Restore it from a backup, or remove it to read every transaction the log still keeps")
        }
        return number
    }

    private static func record(of transaction: AppendLogTransaction) -> StoreHistoryRecord {
        StoreHistoryRecord(
            number: Int64(transaction.number), timestamp: transaction.timestamp, author: transaction.author,
            changes: transaction.changes.map { change in
                switch change {
                case .insert(let id): StoreHistoryRecord.Change(.insert, id)
                case .update(let id, let properties):
                    StoreHistoryRecord.Change(.update, id, updatedProperties: properties)
                case .delete(let id, let tombstone): StoreHistoryRecord.Change(.delete, id, tombstone: tombstone)
                }
            })
    }
}
