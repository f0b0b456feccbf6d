import Foundation
import ModelStore

/// A store's history as a value: its records, the newest transaction number, and how far history
/// was deleted. Stores keep one (and persist its records) to implement `HistoryProviding`.
///
/// It numbers transactions, trims to an optional limit, turns records into
/// `DefaultHistoryTransaction`s for a schema, evaluates `HistoryDescriptor`s, and refuses a
/// fetch that would silently skip deleted history (requirement 4 of `HistoryProviding`).
public struct StoreHistory: Sendable {
    /// The transactions still kept, oldest first.
    public private(set) var records: [StoreHistoryRecord]
    /// The number of the newest transaction ever recorded (0 before the first).
    public private(set) var lastNumber: Int64
    /// The highest transaction number that was deleted or trimmed (0 if none was).
    public private(set) var expiredThrough: Int64
    /// Keep at most this many changes, counted over all transactions (the oldest transactions go
    /// first, and tokens into them expire), or every transaction when `nil`.
    public var limit: Int? {
        didSet { trim() }
    }
    /// How many changes the kept transactions hold.
    public private(set) var changeCount: Int

    /// A history with these records (oldest first).
    ///
    /// - Parameters:
    ///   - records: The transactions kept.
    ///   - lastNumber: The newest number ever given; defaults to the last record's.
    ///   - expiredThrough: The highest number deleted so far.
    ///   - limit: At most this many changes are kept.
    public init(
        records: [StoreHistoryRecord] = [], lastNumber: Int64? = nil, expiredThrough: Int64 = 0, limit: Int? = nil
    ) {
        self.records = records
        self.changeCount = records.reduce(0) { $0 + $1.changes.count }
        self.lastNumber = max(lastNumber ?? 0, records.last?.number ?? 0, expiredThrough)
        self.expiredThrough = expiredThrough
        self.limit = limit
        trim()
    }

    /// The record the next transaction with these changes would be, or `nil` when there are none.
    public func nextRecord(
        _ changes: [StoreHistoryRecord.Change], author: String?, timestamp: Date = Date()
    ) -> StoreHistoryRecord? {
        guard !changes.isEmpty else { return nil }
        return StoreHistoryRecord(number: lastNumber + 1, timestamp: timestamp, author: author, changes: changes)
    }

    /// Appends a record made by ``nextRecord(_:author:timestamp:)`` (or read back from storage), then
    /// trims to ``limit``.
    public mutating func append(_ record: StoreHistoryRecord) {
        records.append(record)
        changeCount += record.changes.count
        lastNumber = max(lastNumber, record.number)
        trim()
    }

    /// Records a transaction with these changes; returns its number, or `nil` when there are none.
    @discardableResult
    public mutating func record(
        _ changes: [StoreHistoryRecord.Change], author: String?, timestamp: Date = Date()
    ) -> Int64? {
        guard let record = nextRecord(changes, author: author, timestamp: timestamp) else { return nil }
        append(record)
        return record.number
    }

    /// Records a transaction of at least `count` changes, which `changes` builds only if the history
    /// keeps them: a transaction that alone is over ``limit`` is numbered and expires at once, with
    /// every older one, exactly as appending and trimming it would, and its changes are never built
    /// (a batch delete of a whole large table, say). Returns its number, or `nil` when there are no
    /// changes.
    ///
    /// - Precondition: `changes()` returns `count` changes or more.
    @discardableResult
    public mutating func record(
        count: Int, author: String?, timestamp: Date = Date(), changes: () -> [StoreHistoryRecord.Change]
    ) -> Int64? {
        if dropsAtOnce(count) { return recordDropped() }
        return record(changes(), author: author, timestamp: timestamp)
    }

    /// Whether a transaction of at least `count` changes is trimmed away as soon as it is appended
    /// (it alone is over ``limit``), so that a store can leave its changes unbuilt and call
    /// ``recordDropped()`` instead of ``append(_:)``.
    public func dropsAtOnce(_ count: Int) -> Bool {
        guard let limit else { return false }
        return count > limit
    }

    /// Records a transaction that ``dropsAtOnce(_:)``: numbers it and expires it with every older
    /// one, as appending and trimming it would. Returns its number.
    public mutating func recordDropped() -> Int64 {
        lastNumber += 1
        records.removeAll()
        changeCount = 0
        expiredThrough = lastNumber
        return lastNumber
    }

    /// The transactions `descriptor` selects, for `schema`, as store `storeIdentifier`'s.
    public func transactions(
        _ descriptor: HistoryDescriptor<DefaultHistoryTransaction>, schema: Schema, storeIdentifier: String
    ) throws -> [DefaultHistoryTransaction] {
        try Self.transactions(
            records, descriptor, schema: schema, storeIdentifier: storeIdentifier, expiredThrough: expiredThrough)
    }

    /// Deletes the transactions `descriptor` selects; returns whether any was deleted.
    @discardableResult
    public mutating func delete(
        _ descriptor: HistoryDescriptor<DefaultHistoryTransaction>, schema: Schema, storeIdentifier: String
    ) throws -> Bool {
        let doomed = Set(
            try Self.transactions(
                records, descriptor, schema: schema, storeIdentifier: storeIdentifier, expiredThrough: 0
            )
            .map(\.token.transactionNumber))
        guard let newest = doomed.max() else { return false }
        records.removeAll { doomed.contains($0.number) }
        changeCount = records.reduce(0) { $0 + $1.changes.count }
        expiredThrough = max(expiredThrough, newest)
        return true
    }

    /// Deletes every transaction numbered `number` or lower (all of them after an erase).
    public mutating func delete(throughNumber number: Int64) {
        guard number > 0 else { return }
        records.removeAll { $0.number <= number }
        changeCount = records.reduce(0) { $0 + $1.changes.count }
        expiredThrough = max(expiredThrough, number)
        lastNumber = max(lastNumber, number)
    }

    /// Restores the counters after a store read them back (for example after records were deleted).
    public mutating func restore(lastNumber: Int64, expiredThrough: Int64) {
        self.lastNumber = max(self.lastNumber, lastNumber, expiredThrough)
        self.expiredThrough = max(self.expiredThrough, expiredThrough)
    }

    private mutating func trim() {
        guard let limit, changeCount > limit else { return }
        var dropped = 0
        while changeCount > limit, dropped < records.count {
            changeCount -= records[dropped].changes.count
            expiredThrough = max(expiredThrough, records[dropped].number)
            dropped += 1
        }
        records.removeFirst(dropped)
    }

    // MARK: Reading records

    /// The transactions `descriptor` selects among `records` (oldest first), after checking that it
    /// does not reach into history deleted up to `expiredThrough`.
    public static func transactions(
        _ records: some Sequence<StoreHistoryRecord>, _ descriptor: HistoryDescriptor<DefaultHistoryTransaction>,
        schema: Schema, storeIdentifier: String, expiredThrough: Int64
    ) throws -> [DefaultHistoryTransaction] {
        try checkExpiry(descriptor, expiredThrough: expiredThrough, storeIdentifier: storeIdentifier)
        var result: [DefaultHistoryTransaction] = []
        for record in records {
            let transaction = transaction(of: record, schema: schema, storeIdentifier: storeIdentifier)
            if let predicate = descriptor.predicate, try !predicate.evaluate(transaction) { continue }
            result.append(transaction)
        }
        return arrange(result, descriptor)
    }

    /// Sorts by the descriptor (stable, oldest first among equals) and applies its limit.
    public static func arrange(
        _ transactions: [DefaultHistoryTransaction], _ descriptor: HistoryDescriptor<DefaultHistoryTransaction>
    ) -> [DefaultHistoryTransaction] {
        descriptor.arrange(transactions)
    }

    /// Throws `DataStoreError.Code.historyTokenExpired` when the descriptor's predicate selects by
    /// token and would have selected the newest deleted transaction: its answer would have a gap.
    public static func checkExpiry(
        _ descriptor: HistoryDescriptor<DefaultHistoryTransaction>, expiredThrough: Int64, storeIdentifier: String
    ) throws {
        guard expiredThrough > 0, let predicate = descriptor.predicate else { return }
        // A stand-in for the newest deleted transaction, and one from before any history: a predicate
        // that accepts the first but not the second selects by token and reaches into deleted history.
        func standIn(_ number: Int64) -> DefaultHistoryTransaction {
            DefaultHistoryTransaction(
                token: DefaultHistoryToken(storeIdentifier: storeIdentifier, transactionNumber: number), author: nil,
                timestamp: .distantPast, changes: [])
        }
        guard try predicate.evaluate(standIn(expiredThrough)), try !predicate.evaluate(standIn(0)) else { return }
        throw DataStoreError(
            .historyTokenExpired,
            "the history of the store '\(storeIdentifier)' was deleted up to transaction \(expiredThrough), "
                + "and the descriptor asks for transactions from before that",
            remedy:
                "Fetch the history without a token to get every transaction the store still keeps, rebuild what you "
                + "derived from the history you missed, and continue from the newest token")
    }

    /// The transaction a record stands for, with typed changes for the models `schema` knows
    /// (changes of entities it does not know are left out).
    public static func transaction(
        of record: StoreHistoryRecord, schema: Schema, storeIdentifier: String
    ) -> DefaultHistoryTransaction {
        var changes: [HistoryChange] = []
        changes.reserveCapacity(record.changes.count)
        for (index, change) in record.changes.enumerated() {
            guard let entity = schema.entity(named: change.id.entityName) else { continue }
            changes.append(typed(change, entity: entity, position: Int64(index), number: record.number))
        }
        return DefaultHistoryTransaction(
            token: DefaultHistoryToken(storeIdentifier: storeIdentifier, transactionNumber: record.number),
            author: record.author, timestamp: record.timestamp, changes: changes)
    }

    private static func typed(
        _ change: StoreHistoryRecord.Change, entity: Schema.Entity, position: Int64, number: Int64
    ) -> HistoryChange {
        func make<Model: PersistentModel>(_: Model.Type) -> HistoryChange {
            switch change.kind {
            case .insert:
                return .insert(
                    DefaultHistoryInsert<Model>(
                        changedPersistentIdentifier: change.id, changeIdentifier: position,
                        transactionIdentifier: number))
            case .update:
                return .update(
                    DefaultHistoryUpdate<Model>(
                        changedPersistentIdentifier: change.id, changeIdentifier: position,
                        transactionIdentifier: number,
                        updatedAttributes: HistoryUpdatedAttributes(names: change.updatedProperties, entity: entity)))
            case .delete:
                return .delete(
                    DefaultHistoryDelete<Model>(
                        changedPersistentIdentifier: change.id, changeIdentifier: position,
                        transactionIdentifier: number,
                        tombstone: HistoryTombstone(values: change.tombstone, entity: entity)))
            }
        }
        return make(entity.modelType)
    }
}
