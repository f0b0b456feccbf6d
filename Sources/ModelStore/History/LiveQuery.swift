import Foundation
import Observation

/// The results of a fetch that stay current: what SwiftData's `@Query`, Core Data's
/// `NSFetchedResultsController` and GRDB's `ValueObservation` are on their platforms, usable in a
/// command-line tool or a server as well as in an app.
///
/// ```swift
/// let upcoming = LiveQuery(FetchDescriptor<Trip>(sortBy: [SortDescriptor(\.start)]), in: container.mainContext)
/// print(upcoming.results.map(\.name))          // observable: a SwiftUI view reading it redraws
/// for await ids in upcoming.updates { … }      // or each new result, as identifiers
/// ```
///
/// It fetches once when created, then updates after every committed change that can alter its
/// results: a save or batch operation of any context of the container, an erase, and (while
/// ``ModelContainer/watchExternalChanges(every:)`` runs) other processes' transactions. A change
/// that touches none of the entities the query reads (its own, and those its relationships reach)
/// costs nothing, and a burst of changes is coalesced into one update on the main actor.
///
/// An update of a sorted query without a limit or an offset, in a context that merges changes
/// automatically (the main context does), is incremental: only the changed models are read and
/// placed, so a one-model save costs about the same whatever the size of the result. Any other
/// update, or a change to a related entity, fetches the whole result again.
///
/// The query lives on the main actor with its context; keep a reference to it as long as you
/// want it to update.
@MainActor @Observable public final class LiveQuery<Model: PersistentModel> {
    /// The models the descriptor selects, in its order, as of the last refetch.
    public private(set) var results: [Model] = []
    /// The error of the last refetch, or `nil` when it succeeded.
    public private(set) var error: (any Error)?
    /// How many times the query fetched (1 after creation): a cheap way to see that it updated.
    public private(set) var fetchCount = 0
    /// What the query fetches.
    public let descriptor: FetchDescriptor<Model>
    /// The context the results belong to.
    @ObservationIgnored public let context: ModelContext

    @ObservationIgnored private var listeners: [AsyncStream<[PersistentIdentifier]>.Continuation] = []
    /// The objects in ``results`` by identifier, so an update finds a model even after the
    /// context forgot it (a delete merged first).
    @ObservationIgnored private var members: [PersistentIdentifier: ObjectIdentifier] = [:]
    /// What changed since the last update, gathered on the saving threads; `nil` when nothing did.
    @ObservationIgnored private let pending = LockedValue<PendingChanges?>(nil)
    @ObservationIgnored private let hub: ChangeHub
    @ObservationIgnored nonisolated(unsafe) private var observation: UUID?

    /// A query for `descriptor` in `context`, fetched at once.
    public init(_ descriptor: FetchDescriptor<Model>, in context: ModelContext) {
        self.descriptor = descriptor
        self.context = context
        let name = Schema.entityName(for: Model.self)
        var names: Set<String> = [name]
        if let entity = context.container.schema.entity(named: name) {
            for relationship in entity.relationships { names.insert(relationship.destination) }
        }
        hub = context.container.changeHub
        refresh()
        // Called on the saving thread: the first change of a burst schedules one update on the
        // main actor; the others add to what it will apply.
        let pending = pending
        let entityNames = names
        observation = hub.observe { [weak self] change in
            guard change.touches(anyOf: entityNames) else { return }
            let isFirst = pending.withLock { pending in
                defer { pending = (pending ?? PendingChanges()).adding(change, of: name) }
                return pending == nil
            }
            if isFirst { Task { @MainActor in self?.applyPendingChanges() } }
        }
    }

    deinit {
        // Safety: `observation` is written once, in init, before any other access.
        if let observation { hub.unobserve(observation) }
    }

    /// The identifiers of the results, each time they are fetched again (the current ones first).
    public var updates: AsyncStream<[PersistentIdentifier]> {
        let (stream, continuation) = AsyncStream<[PersistentIdentifier]>.makeStream(
            bufferingPolicy: .bufferingNewest(1))
        continuation.yield(results.map(\.persistentModelID))
        listeners.append(continuation)
        return stream
    }

    /// Fetches the whole result again now.
    public func refresh() {
        pending.withLock { $0 = nil }
        fetchCount += 1
        do {
            results = try context.fetch(descriptor)
            error = nil
        } catch {
            self.error = error
        }
        members = Dictionary(
            results.map { ($0.persistentModelID, ObjectIdentifier($0)) }, uniquingKeysWith: { first, _ in first })
        publish()
    }

    /// Applies the changes committed since the last update now, instead of on the main actor's
    /// next turn; does nothing when there are none.
    public func applyPendingChanges() {
        guard
            let changes = pending.withLock({ pending in
                defer { pending = nil }
                return pending
            })
        else { return }
        guard !changes.needsRefetch, error == nil, !descriptor.sortBy.isEmpty, descriptor.fetchLimit == nil,
            (descriptor.fetchOffset ?? 0) == 0, context.automaticallyMergesChanges
        else { return refresh() }
        do {
            try update(changes.identifiers)
        } catch {
            refresh()
        }
    }

    /// Places the models with these identifiers where the descriptor puts them, or takes them out.
    ///
    /// It costs a scan of the results by object identity and two moves of the array's tail per
    /// changed model, with no copy of the results and no retain of the models it passes.
    private func update(_ identifiers: Set<PersistentIdentifier>) throws {
        context.mergePendingChanges()
        var leaving = Set<ObjectIdentifier>()
        for id in identifiers {
            if let object = members.removeValue(forKey: id) { leaving.insert(object) }
        }
        if !leaving.isEmpty {
            for position in positions(of: leaving).reversed() { results.remove(at: position) }
        }
        for id in identifiers.sorted() {
            guard let model = try context.model(for: id, as: Model.self),
                try descriptor.predicate?.evaluate(model) ?? true
            else { continue }
            results.insert(model, at: insertionIndex(of: model, in: results))
            members[id] = ObjectIdentifier(model)
        }
        fetchCount += 1
        publish()
    }

    /// The positions in ``results`` of these objects, in increasing order.
    ///
    /// The scan reads the references as addresses: this class is generic over the model type, so
    /// reading the elements as models would retain and release each one through its witness table.
    private func positions(of objects: Set<ObjectIdentifier>) -> [Int] {
        let addresses = Set(objects.map { UnsafeRawPointer(bitPattern: UInt(bitPattern: $0)) })
        var found: [Int] = []
        found.reserveCapacity(objects.count)
        results.withUnsafeBufferPointer { models in
            // A class reference is the object's address, so the buffer reads as addresses.
            models.withMemoryRebound(to: UnsafeRawPointer?.self) { buffer in
                if addresses.count == 1, let only = addresses.first {
                    if let index = buffer.firstIndex(of: only) { found.append(index) }
                    return
                }
                for index in buffer.indices where addresses.contains(buffer[index]) {
                    found.append(index)
                    if found.count == addresses.count { break }
                }
            }
        }
        return found
    }

    /// Where `model` goes in `models`, which are in the descriptor's order (ties by identifier, as
    /// stores break them).
    private func insertionIndex(of model: Model, in models: [Model]) -> Int {
        func precedes(_ lhs: Model, _ rhs: Model) -> Bool {
            for sort in descriptor.sortBy {
                switch sort.compare(lhs, rhs) {
                case .orderedAscending: return true
                case .orderedDescending: return false
                case .orderedSame: continue
                }
            }
            return lhs.persistentModelID < rhs.persistentModelID
        }
        var low = 0
        var high = models.count
        while low < high {
            let middle = (low + high) / 2
            if precedes(models[middle], model) { low = middle + 1 } else { high = middle }
        }
        return low
    }

    private func publish() {
        guard !listeners.isEmpty else { return }
        let ids = results.map(\.persistentModelID)
        listeners.removeAll { continuation in
            if case .terminated = continuation.yield(ids) { return true }
            return false
        }
    }
}

/// The changes a ``LiveQuery`` has not applied yet.
private struct PendingChanges: Sendable {
    /// Models of the query's entity that were inserted, updated or deleted.
    var identifiers: Set<PersistentIdentifier> = []
    /// Whether the update must fetch everything (an erase, or a change to a related entity).
    var needsRefetch = false

    func adding(_ change: ModelContainerChange, of entityName: String) -> Self {
        var next = self
        if change.invalidatesAllIdentifiers || change.entityNames.contains(where: { $0 != entityName }) {
            next.needsRefetch = true
        } else {
            next.identifiers.formUnion(change.identifiers)
        }
        return next
    }
}
