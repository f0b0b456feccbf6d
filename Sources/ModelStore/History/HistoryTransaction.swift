import Foundation

/// A position in one store's history: SwiftData's `DefaultHistoryToken`.
///
/// Every transaction a store records gets the next token. Keep the newest token you have read
/// (it is `Codable`), and later ask only for what came after it:
///
/// ```swift
/// let descriptor = HistoryDescriptor<DefaultHistoryTransaction>(predicate: #Predicate { $0.token > lastToken })
/// let newer = try context.fetchHistory(descriptor)
/// ```
///
/// Tokens of one store are ordered as their transactions were committed, and survive closing and
/// reopening a durable store. Tokens of different stores are ordered by store identifier first,
/// which says nothing about when their transactions happened.
public struct DefaultHistoryToken: Codable, Hashable, Comparable, Sendable, CustomStringConvertible {
    /// The store whose history this token points into.
    public let storeIdentifier: String
    /// The transaction's number in that store: 1 for its first, increasing by one per transaction.
    public let transactionNumber: Int64

    /// A token for transaction `transactionNumber` of the store `storeIdentifier`.
    public init(storeIdentifier: String, transactionNumber: Int64) {
        self.storeIdentifier = storeIdentifier
        self.transactionNumber = transactionNumber
    }

    /// Orders tokens of one store by transaction; tokens of different stores by store identifier.
    public static func < (lhs: Self, rhs: Self) -> Bool {
        if lhs.storeIdentifier != rhs.storeIdentifier { return lhs.storeIdentifier < rhs.storeIdentifier }
        return lhs.transactionNumber < rhs.transactionNumber
    }

    /// `store#number`.
    public var description: String { "\(storeIdentifier)#\(transactionNumber)" }
}

/// A transaction read from a store's history: SwiftData's `HistoryTransaction` protocol.
///
/// ModelStore's stores return ``DefaultHistoryTransaction``; the protocol exists so that code written
/// against SwiftData's generic history API (`HistoryDescriptor<T>`, `fetchHistory<T>`) ports unchanged.
public protocol HistoryTransaction: Hashable, Identifiable, Sendable {
    /// The type of the transaction's token.
    associatedtype TokenType: Comparable & Codable & Hashable & Sendable
    /// Where the transaction stands in its store's history.
    var token: TokenType { get }
    /// The transaction's number in its store.
    var transactionIdentifier: Int64 { get }
    /// The author of the context that saved it, if it had one.
    var author: String? { get }
    /// When it was committed.
    var timestamp: Date { get }
    /// The store that recorded it.
    var storeIdentifier: String { get }
    /// What it inserted, updated and deleted.
    var changes: [HistoryChange] { get }
}

/// One saved transaction: SwiftData's `DefaultHistoryTransaction`.
///
/// A save of a context is one transaction per store it changed; so is each batch delete, update and
/// insert. Read changes by matching the model type you care about:
///
/// ```swift
/// for change in transaction.changes {
///     switch change {
///     case .insert(let insert as DefaultHistoryInsert<Trip>): print("new trip", insert.changedPersistentIdentifier)
///     case .update(let update as DefaultHistoryUpdate<Trip>): print("changed", update.updatedAttributes)
///     case .delete(let delete as DefaultHistoryDelete<Trip>): print("deleted", delete.tombstone[\.name] ?? "")
///     default: break
///     }
/// }
/// ```
public struct DefaultHistoryTransaction: HistoryTransaction, CustomStringConvertible {
    /// Where the transaction stands in its store's history.
    public let token: DefaultHistoryToken
    /// The transaction's number in its store (the token's ``DefaultHistoryToken/transactionNumber``).
    public var transactionIdentifier: Int64 { token.transactionNumber }
    /// The author of the context that saved it (``ModelContext/author``), if it had one.
    public let author: String?
    /// When it was committed.
    public let timestamp: Date
    /// The store that recorded it.
    public var storeIdentifier: String { token.storeIdentifier }
    /// What it inserted, updated and deleted, of the models the container's schema knows.
    public let changes: [HistoryChange]

    /// A transaction; stores build them through `StoreHistory`.
    public init(token: DefaultHistoryToken, author: String?, timestamp: Date, changes: [HistoryChange]) {
        self.token = token
        self.author = author
        self.timestamp = timestamp
        self.changes = changes
    }

    /// The token identifies the transaction.
    public var id: DefaultHistoryToken { token }

    /// Transactions are equal when their tokens are.
    public static func == (lhs: Self, rhs: Self) -> Bool { lhs.token == rhs.token }
    /// Hashes the token.
    public func hash(into hasher: inout Hasher) { hasher.combine(token) }

    /// `transaction store#number by author: N changes`.
    public var description: String {
        "transaction \(token)" + (author.map { " by '\($0)'" } ?? "") + ": \(changes.count) change(s)"
    }
}

/// What to read from, or delete in, a store's history: SwiftData's `HistoryDescriptor`.
///
/// Without a predicate it selects every transaction the store still keeps; results come oldest
/// first unless ``sortBy`` says otherwise, and ``fetchLimit`` applies after sorting.
public struct HistoryDescriptor<Transaction: HistoryTransaction>: Sendable {
    /// Which transactions, for example `#Predicate { $0.token > token }` or `#Predicate { $0.author == "sync" }`.
    public var predicate: Predicate<Transaction>?
    /// The order of the results; oldest first when empty.
    public var sortBy: [SortDescriptor<Transaction>]
    /// At most this many transactions, or all when `nil`.
    public var fetchLimit: Int?

    /// A descriptor selecting the transactions `predicate` accepts (every one when `nil`).
    public init(predicate: Predicate<Transaction>? = nil, sortBy: [SortDescriptor<Transaction>] = []) {
        self.predicate = predicate
        self.sortBy = sortBy
        self.fetchLimit = nil
    }
}
