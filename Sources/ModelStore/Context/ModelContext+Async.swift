import Dispatch
import Foundation

// The names end in `Async` because an `async` overload named `fetch` or `save` would be chosen in
// every async function, and every existing `try context.save()` there would stop compiling.
extension ModelContext {
    /// The models that match a descriptor, in its order, without holding a thread of Swift's
    /// cooperative pool while the store works.
    ///
    /// With a store that conforms to ``DataStoreAsynchronous`` the context awaits the store when
    /// the store runs the whole query and there are no pending changes to merge; otherwise it runs
    /// ``fetch(_:)`` on a thread outside the cooperative pool. With any other store it calls
    /// ``fetch(_:)``. The results are the same as ``fetch(_:)``'s in every case.
    public func fetchAsync<T: PersistentModel>(_ descriptor: FetchDescriptor<T>) async throws -> [T] {
        let channel = try channel(of: T.self)
        guard channel.isAsynchronous else { return try fetch(descriptor) }
        guard descriptor.relationshipKeyPathsForPrefetching.isEmpty,
            let request = try storeOnlyRequest(descriptor, channel: channel)
        else { return try await offloaded { try $0.fetch(descriptor) } }
        let snapshots = try await channel.fetchAsync(request)
        let entityName = request.query?.entityName ?? Schema.entityName(for: T.self)
        for snapshot in snapshots where snapshot.entity.name != entityName {
            throw DataStoreError(
                .corrupted, "the store returned a '\(snapshot.entity.name)' snapshot for a fetch of '\(entityName)'",
                remedy: "Fix the adapter: fetch must return only snapshots of the requested entity",
                entityName: entityName)
        }
        return try materialize(snapshots, as: T.self)
    }

    /// How many models match a descriptor, awaiting an asynchronous store; see ``fetchAsync(_:)``.
    public func fetchCountAsync<T: PersistentModel>(_ descriptor: FetchDescriptor<T>) async throws -> Int {
        let channel = try channel(of: T.self)
        guard channel.isAsynchronous else { return try fetchCount(descriptor) }
        if let request = try storeOnlyRequest(descriptor, channel: channel),
            let count = try await channel.countAsync(request)
        {
            return count
        }
        return try await offloaded { try $0.fetchCount(descriptor) }
    }

    /// The identifiers of the models that match a descriptor, awaiting an asynchronous store.
    public func fetchIdentifiersAsync<T: PersistentModel>(
        _ descriptor: FetchDescriptor<T>
    ) async throws -> [PersistentIdentifier] {
        let channel = try channel(of: T.self)
        guard channel.isAsynchronous else { return try fetchIdentifiers(descriptor) }
        if let request = try storeOnlyRequest(descriptor, channel: channel),
            let ids = try await channel.identifiersAsync(request)
        {
            return ids
        }
        return try await offloaded { try $0.fetchIdentifiers(descriptor) }
    }

    /// Stores every pending change as ``save()`` does, awaiting the store when it is asynchronous.
    ///
    /// A save that touches one ``DataStoreAsynchronous`` store awaits its asynchronous `save`; a
    /// save across several stores runs ``save()`` outside the cooperative pool when any of them is
    /// asynchronous; otherwise this calls ``save()``. Either way the save is all or nothing, and a
    /// failed save keeps the pending changes.
    public func saveAsync() async throws {
        processPendingChanges()
        guard hasChanges else { return }
        let channels = container.channels
        guard channels.contains(where: \.isAsynchronous) else { return try save() }
        try await resolveDuplicateInsertsAsync()
        guard channels.count == 1 else { return try await offloaded { try $0.save() } }
        let changed = changedModels.models.filter { $0.persistentBackingData.state == .registered }
        let start = ContinuousClock.now
        do {
            var prepared = try prepareCommit(
                inserted: insertedModels.models, changed: changed, deleted: deletedModels.models)
            var written = Written()
            let summary = prepared.changes.summary
            if !prepared.changes.isEmpty {
                let changes = prepared.changes
                written.add(
                    try await channels[0].saveAsync(
                        changes.request(
                            editingState, inserted: changes.inserted, updated: changes.updated,
                            deleted: changes.deleted)))
            }
            finishCommit(&prepared, written: &written)
            DebugLog.write(1, "saveAsync: \(summary) in \(DebugLog.milliseconds(since: start))")
        } catch {
            DebugLog.write(
                1, "saveAsync failed after \(DebugLog.milliseconds(since: start)), nothing stored: \(error)")
            throw error
        }
        insertedModels.removeAll()
        changedModels.removeAll()
        deletedModels.removeAll()
    }

    // MARK: Helpers

    /// The channel to the store that holds `T`.
    private func channel<T: PersistentModel>(of type: T.Type) throws -> StoreChannel {
        try container.channel(for: entity(of: T.self).name)
    }

    /// The store request of a fetch the store answers alone (no pending changes to merge, nothing
    /// left for the context to filter, sort or window), or `nil`.
    private func storeOnlyRequest<T: PersistentModel>(
        _ descriptor: FetchDescriptor<T>, channel: StoreChannel
    ) throws -> DataStoreFetchRequest<T>? {
        let entity = try entity(of: T.self)
        let pending = descriptor.includePendingChanges ? pendingModels(of: T.self) : []
        let hasPending = !pending.isEmpty || (descriptor.includePendingChanges && hasDeletions(of: entity.name))
        guard !hasPending else { return nil }
        // The plan kept for the descriptor's shape, as a synchronous fetch finds it (see `FetchPlanCache`).
        let plan = try plan(
            descriptor, entity: entity, channel: channel, hasPending: false, mergesPending: false,
            reusing: container.fetchPlans)
        guard plan.isQuerying, plan.storeDoesEverything else { return nil }
        return plan.request(descriptor, editingState: editingState)
    }

    /// Runs synchronous context work on a thread outside Swift's cooperative pool and awaits it.
    private func offloaded<Value>(_ work: @escaping (ModelContext) throws -> Value) async throws -> Value {
        let box = OffloadedWork(context: self, work: work)
        let result = try await withCheckedThrowingContinuation {
            (continuation: CheckedContinuation<OffloadedResult<Value>, any Error>) in
            DispatchQueue.global().async {
                do {
                    continuation.resume(returning: try box.run())
                } catch {
                    continuation.resume(throwing: error)
                }
            }
        }
        return result.value
    }
}

/// A context and the work to run on it, sent to another thread while the caller waits.
///
/// Safety: the calling task is suspended until the work finishes, so the context and its models
/// are used by one thread at a time, as concurrency rule 1 of ``ModelContext`` requires; the
/// continuation orders the other thread's writes before the caller resumes.
private struct OffloadedWork<Value>: @unchecked Sendable {
    let context: ModelContext
    let work: (ModelContext) throws -> Value

    func run() throws -> OffloadedResult<Value> { OffloadedResult(value: try work(context)) }
}

/// A result handed back across the thread hop; see ``OffloadedWork`` for why that is safe.
private struct OffloadedResult<Value>: @unchecked Sendable {
    let value: Value
}
