import Foundation

/// One committed change to a container's stores: a context's save, a batch operation, an erase, or
/// a transaction another process committed to a shared store.
public struct ModelContainerChange: Sendable, CustomStringConvertible {
    /// Where a change came from.
    public enum Origin: Sendable, Hashable {
        /// A save or batch operation of a context of this container; the context's editing-state id.
        case context(UUID)
        /// A transaction committed by another container or process on a store this container shares,
        /// seen through the store's history.
        case external
        /// ``ModelContainer/erase()``: every model may be gone.
        case erase
    }

    /// The models inserted, under their permanent identifiers.
    public let insertedIdentifiers: [PersistentIdentifier]
    /// The models updated.
    public let updatedIdentifiers: [PersistentIdentifier]
    /// The models deleted.
    public let deletedIdentifiers: [PersistentIdentifier]
    /// Whether any model of the container may have changed (after an erase); the identifier lists are empty then.
    public let invalidatesAllIdentifiers: Bool
    /// The author of the context that made the change, if known.
    public let author: String?
    /// The history tokens of the transactions the change recorded, one per store that keeps history.
    public let historyTokens: [DefaultHistoryToken]
    /// Where the change came from.
    public let origin: Origin

    /// A change.
    public init(
        inserted: [PersistentIdentifier] = [], updated: [PersistentIdentifier] = [],
        deleted: [PersistentIdentifier] = [], invalidatesAllIdentifiers: Bool = false, author: String? = nil,
        historyTokens: [DefaultHistoryToken] = [], origin: Origin
    ) {
        self.insertedIdentifiers = inserted
        self.updatedIdentifiers = updated
        self.deletedIdentifiers = deleted
        self.invalidatesAllIdentifiers = invalidatesAllIdentifiers
        self.author = author
        self.historyTokens = historyTokens
        self.origin = origin
    }

    /// The names of the entities whose models the change inserted, updated or deleted.
    public var entityNames: Set<String> {
        var names = Set<String>()
        for id in insertedIdentifiers { names.insert(id.entityName) }
        for id in updatedIdentifiers { names.insert(id.entityName) }
        for id in deletedIdentifiers { names.insert(id.entityName) }
        return names
    }

    /// Whether models of any of these entities may have changed.
    public func touches(anyOf entityNames: Set<String>) -> Bool {
        invalidatesAllIdentifiers || !self.entityNames.isDisjoint(with: entityNames)
    }

    /// Every model the change names.
    var identifiers: Set<PersistentIdentifier> {
        Set(insertedIdentifiers).union(updatedIdentifiers).union(deletedIdentifiers)
    }

    /// The change a transaction read from a store's history stands for.
    init(external transaction: DefaultHistoryTransaction) {
        var inserted: [PersistentIdentifier] = []
        var updated: [PersistentIdentifier] = []
        var deleted: [PersistentIdentifier] = []
        for change in transaction.changes {
            switch change {
            case .insert(let insert): inserted.append(insert.changedPersistentIdentifier)
            case .update(let update): updated.append(update.changedPersistentIdentifier)
            case .delete(let delete): deleted.append(delete.changedPersistentIdentifier)
            }
        }
        self.init(
            inserted: inserted, updated: updated, deleted: deleted, author: transaction.author,
            historyTokens: [transaction.token], origin: .external)
    }

    /// Whether the change holds nothing.
    public var isEmpty: Bool {
        !invalidatesAllIdentifiers && insertedIdentifiers.isEmpty && updatedIdentifiers.isEmpty
            && deletedIdentifiers.isEmpty
    }

    /// `N inserted, N updated, N deleted (origin)`.
    public var description: String {
        if invalidatesAllIdentifiers { return "every model invalidated (\(origin))" }
        return
            "\(insertedIdentifiers.count) inserted, \(updatedIdentifiers.count) updated, \(deletedIdentifiers.count) deleted (\(origin))"
    }
}

/// The changes committed to a container from the moment you start iterating: an `AsyncSequence`
/// that never ends while the container lives.
///
/// ```swift
/// for await change in container.changes where change.touches(anyOf: ["Trip"]) {
///     print(change)
/// }
/// ```
///
/// Each iterator is a subscription of its own, starting when it is made: make it before the saves
/// you want to see. Changes are buffered without limit until the iterator reads them, so read
/// them, or drop the iterator.
public struct ModelContainerChanges: AsyncSequence, Sendable {
    /// Each element is one committed change.
    public typealias Element = ModelContainerChange
    /// The iterator, a subscription to the container's changes.
    public typealias AsyncIterator = AsyncStream<ModelContainerChange>.Iterator

    let hub: ChangeHub

    /// Subscribes to the container's changes from now on.
    public func makeAsyncIterator() -> AsyncStream<ModelContainerChange>.Iterator {
        hub.subscribe().makeAsyncIterator()
    }
}

/// The subscribers to a container's changes, and what the external-change watchers need to tell
/// this container's own transactions from other processes'.
package final class ChangeHub: Sendable {
    private let subscribers = LockedValue<[UUID: AsyncStream<ModelContainerChange>.Continuation]>([:])
    private let local = LockedValue(LocalTransactions())
    private let observers = LockedValue<[UUID: @Sendable (ModelContainerChange) -> Void]>([:])

    /// This container's recent transactions, kept only while a watcher runs.
    private struct LocalTransactions {
        var watchers = 0
        /// Tokens of saves made here that a watcher has not read back yet.
        var tokens: Set<DefaultHistoryToken> = []
        /// The models of batch operations made here (which carry no token), not read back yet.
        var batches: [Set<PersistentIdentifier>] = []
    }

    func subscribe() -> AsyncStream<ModelContainerChange> {
        let id = UUID()
        let (stream, continuation) = AsyncStream<ModelContainerChange>.makeStream(bufferingPolicy: .unbounded)
        continuation.onTermination = { [weak self] _ in
            _ = self?.subscribers.withLock { $0.removeValue(forKey: id) }
        }
        subscribers.withLock { $0[id] = continuation }
        return stream
    }

    /// Calls `handler` with every change, on the thread that publishes it, until ``unobserve(_:)``.
    func observe(_ handler: @escaping @Sendable (ModelContainerChange) -> Void) -> UUID {
        let id = UUID()
        observers.withLock { $0[id] = handler }
        return id
    }

    /// Stops calling an ``observe(_:)`` handler.
    func unobserve(_ id: UUID) { _ = observers.withLock { $0.removeValue(forKey: id) } }

    package func publish(_ change: ModelContainerChange) {
        guard !change.isEmpty else { return }
        if case .context = change.origin {
            local.withLock { local in
                guard local.watchers > 0 else { return }
                if change.historyTokens.isEmpty {
                    // A store without history never reads these back: keep only the recent ones.
                    if local.batches.count == 1_000 { local.batches.removeFirst() }
                    local.batches.append(change.identifiers)
                } else {
                    local.tokens.formUnion(change.historyTokens)
                }
            }
        }
        for continuation in subscribers.withLock({ Array($0.values) }) { continuation.yield(change) }
        for handler in observers.withLock({ Array($0.values) }) { handler(change) }
    }

    /// A watcher starts or stops.
    func watching(_ starts: Bool) {
        local.withLock { local in
            local.watchers += starts ? 1 : -1
            if local.watchers == 0 { local = LocalTransactions() }
        }
    }

    /// Whether a transaction read from a store's history was made by this container (and forgets it).
    func isLocal(_ transaction: DefaultHistoryTransaction) -> Bool {
        local.withLock { local in
            if local.tokens.remove(transaction.token) != nil { return true }
            let models = Set(transaction.changes.map(\.changedPersistentIdentifier))
            guard let batch = local.batches.firstIndex(of: models) else { return false }
            local.batches.remove(at: batch)
            return true
        }
    }

    deinit {
        for continuation in subscribers.withLock({ Array($0.values) }) { continuation.finish() }
    }
}

extension ModelContainer {
    /// Every change committed to this container's stores from the moment an iterator is made: saves
    /// and batch operations of its contexts, erases, and (while ``watchExternalChanges(every:)``
    /// runs) other containers' and processes' transactions.
    public var changes: ModelContainerChanges { ModelContainerChanges(hub: changeHub) }

    /// Reads the history of every store that keeps it (``HistoryProviding``) every `interval`, and
    /// publishes to ``changes`` each transaction another container or process committed, with
    /// ``ModelContainerChange/Origin/external`` as its origin. Returns the watch: it runs until
    /// you cancel it or drop it.
    ///
    /// A transaction reaches ``changes`` at most `interval` plus one history read after it was
    /// committed. Transactions this container made are not published again. If history was
    /// trimmed or deleted past what the watch read last (``DataStoreError/Code/historyTokenExpired``),
    /// the watch publishes a change that invalidates every model and goes on from the newest
    /// transaction. The reads run on a task of their own, off the caller's actor; a JSON-file
    /// store reloads its file when another process saved it.
    public func watchExternalChanges(every interval: Duration = .milliseconds(250)) -> ExternalChangeWatch {
        let stores = channels.compactMap(\.history)
        let hub = changeHub
        hub.watching(true)
        var newest: [String: DefaultHistoryToken] = [:]
        for store in stores {
            newest[store.identifier] = (try? Self.history(of: store, after: nil))?.last?.token
        }
        let task = Task.detached { [newest] in
            var newest = newest
            defer { hub.watching(false) }
            while !Task.isCancelled {
                try? await Task.sleep(for: interval)
                for store in stores where !Task.isCancelled {
                    let transactions: [DefaultHistoryTransaction]
                    do {
                        transactions = try Self.history(of: store, after: newest[store.identifier])
                    } catch DataStoreError.historyTokenExpired {
                        newest[store.identifier] = (try? Self.history(of: store, after: nil))?.last?.token
                        hub.publish(ModelContainerChange(invalidatesAllIdentifiers: true, origin: .external))
                        continue
                    } catch {
                        continue  // A store that cannot be read now is tried again at the next turn.
                    }
                    for transaction in transactions {
                        newest[store.identifier] = transaction.token
                        if !hub.isLocal(transaction) { hub.publish(ModelContainerChange(external: transaction)) }
                    }
                }
            }
        }
        return ExternalChangeWatch(task: task)
    }

    private static func history(
        of store: any HistoryProviding, after token: DefaultHistoryToken?
    ) throws -> [DefaultHistoryTransaction] {
        guard let token else { return try store.fetchHistory(HistoryDescriptor()) }
        return try store.fetchHistory(HistoryDescriptor(predicate: #Predicate { $0.token > token }))
    }
}

/// A running ``ModelContainer/watchExternalChanges(every:)``: it stops when cancelled or dropped.
public final class ExternalChangeWatch: Sendable {
    private let task: Task<Void, Never>

    init(task: Task<Void, Never>) { self.task = task }

    /// Stops watching.
    public func cancel() { task.cancel() }

    deinit { task.cancel() }
}
