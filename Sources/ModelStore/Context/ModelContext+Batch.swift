import Foundation

/// One property assignment of a batch update or insert: `.set(\.isDone, to: true)`.
public struct BatchAssignment<Model: PersistentModel>: Sendable {
    @usableFromInline let keyPath: any PartialKeyPath<Model> & Sendable
    /// The stored form, or why the value could not be encoded (thrown when the batch runs).
    @usableFromInline let encoded: Result<StoreValue, any Error>

    @usableFromInline
    init(keyPath: any PartialKeyPath<Model> & Sendable, encoded: Result<StoreValue, any Error>) {
        self.keyPath = keyPath
        self.encoded = encoded
    }

    /// The stored form of the value; throws if it failed to encode.
    @usableFromInline func value() throws -> StoreValue { try encoded.get() }

    /// Sets an attribute to a value.
    @inlinable
    public static func set<Value>(_ keyPath: any KeyPath<Model, Value> & Sendable, to value: Value) -> Self {
        // The common scalar types convert in line (the comparisons of metatypes fold away once the
        // caller's `Value` is known); every other type goes through its registered codec.
        let plain: StoreValue? =
            if Value.self == String.self {
                .string(value as! String)
            } else if Value.self == Int.self {
                .int(Int64(value as! Int))
            } else if Value.self == Double.self {
                .double(value as! Double)
            } else if Value.self == Bool.self {
                .bool(value as! Bool)
            } else if Value.self == Date.self {
                .date(value as! Date)
            } else if Value.self == Int64.self {
                .int(value as! Int64)
            } else {
                nil
            }
        if let plain { return BatchAssignment(keyPath: keyPath, encoded: .success(plain)) }
        return encoding(keyPath, value)
    }

    @usableFromInline
    static func encoding<Value>(_ keyPath: any KeyPath<Model, Value> & Sendable, _ value: Value) -> Self {
        guard let codec = ValueCodecs.codec(for: Value.self) else {
            preconditionFailure("'\(Value.self)' is not a storable type")
        }
        return BatchAssignment(keyPath: keyPath, encoded: Result { try codec.encode(value) })
    }
}

extension ModelContext {
    /// Deletes every model of a type that matches the predicate, at once, applying delete rules.
    ///
    /// Runs immediately against the store (it does not wait for ``save()``) and leaves the
    /// context's other pending changes alone. Entities without relationships are deleted by the
    /// store's batch delete when it has one, without materialising models; without a predicate,
    /// the store drops every model of the type at once (``DataStoreBatching/deleteEveryModel(_:)``).
    /// ``didSave`` names each deleted model; nothing is posted when nothing matched, except that a
    /// delete without a predicate posts ``willSave`` before it knows.
    ///
    /// For a model class with subclasses, models of the subclasses are deleted too unless
    /// `includeSubclasses` is `false`.
    public func delete<T: PersistentModel>(
        model type: T.Type, where predicate: Predicate<T>? = nil, includeSubclasses: Bool = true
    ) throws {
        var descriptor = FetchDescriptor<T>(predicate: predicate)
        descriptor.includePendingChanges = false
        let entity = try self.entity(of: T.self)
        let channel = try container.channel(for: entity.name)
        try channel.requireAllowsSave("a batch delete of '\(entity.name)'")
        let untouched = entity.relationships.isEmpty && !container.schema.isReferenced(entity.name)
        // In a hierarchy's entity, a delete of one class (or of its models without their
        // subclasses') picks models by class: it deletes them as models.
        let byClass =
            entity.classAttribute != nil
            && (!includeSubclasses || ObjectIdentifier(T.self) != ObjectIdentifier(entity.modelType))
        if untouched, !byClass, channel.takesBatches {
            let ids: PersistentIdentifiers
            if predicate == nil {
                // Every model: the store drops the entity's rows at once and says which they were.
                NotificationCenter.default.post(name: Self.willSave, object: self)
                ids = try channel.deleteEveryModel(DataStoreDeleteEveryModelRequest<T>(editingState: editingState))
                guard !ids.isEmpty else { return }
            } else {
                let matched = try fetchIdentifiers(descriptor)
                guard !matched.isEmpty else { return }
                NotificationCenter.default.post(name: Self.willSave, object: self)
                try channel.delete(
                    DataStoreBatchDeleteRequest(
                        predicate: predicate, identifiers: matched, includeSubclasses: includeSubclasses,
                        editingState: editingState))
                ids = PersistentIdentifiers(matched)
            }
            detachDeleted(ids, entityName: entity.name, everyModel: predicate == nil)
            didSave(inserted: [], updated: [], deleted: ids.array, historyTokens: [])
            return
        }
        var models = try fetch(descriptor)
        if !includeSubclasses { models.removeAll { Swift.type(of: $0) != T.self } }
        guard !models.isEmpty else { return }
        try commit(inserted: [], changed: [], deleted: models)
        for model in models { deletedModels.remove(model) }
    }

    /// Detaches the registered models a batch delete removed from the store. After a delete of
    /// every model, that is each saved model of the entity, found by walking the registry when it
    /// is the shorter list.
    private func detachDeleted(_ ids: PersistentIdentifiers, entityName: String, everyModel: Bool) {
        let doomed: [any PersistentModel]
        if everyModel && registry.count < ids.count {
            doomed = registry.models.filter {
                $0.persistentModelID.entityName == entityName && !$0.persistentModelID.isTemporary
            }
        } else {
            doomed = ids.compactMap { registry[$0] }
        }
        for model in doomed {
            insertedModels.remove(model)
            changedModels.remove(model)
            deletedModels.remove(model)
            detach(model)
        }
    }

    /// Sets the same values on every model of a type that matches the predicate, at once, and
    /// returns how many models changed.
    ///
    /// Runs immediately against the store. Uniqueness is checked; registered models without
    /// unsaved changes are refreshed.
    @discardableResult
    public func update<T: PersistentModel>(
        _ type: T.Type, where predicate: Predicate<T>? = nil, set assignments: [BatchAssignment<T>]
    ) throws -> Int {
        let entity = try self.entity(of: T.self)
        var values: [Int: StoreValue] = [:]
        for assignment in assignments {
            guard let name = entity.propertyName(for: assignment.keyPath), let slot = entity.slot(of: name),
                case .attribute = entity.properties[slot]
            else {
                throw DataStoreError(
                    .invalidValue, "a batch update of '\(entity.name)' sets a key path that is not a stored attribute",
                    remedy: "Use key paths to @Attribute properties", entityName: entity.name)
            }
            values[slot] = try assignment.value()
        }
        var descriptor = FetchDescriptor<T>(predicate: predicate)
        descriptor.includePendingChanges = false
        let channel = try container.channel(for: entity.name)
        try channel.requireAllowsSave("a batch update of '\(entity.name)'")
        let ids = try fetchIdentifiers(descriptor)
        guard !ids.isEmpty, !values.isEmpty else { return 0 }
        NotificationCenter.default.post(name: Self.willSave, object: self)
        if channel.takesBatches {
            if !channel.enforcesUniqueness,
                entity.uniquenessConstraints.contains(where: { $0.contains { values[entity.slot(of: $0)!] != nil } })
            {
                let current = try channel.cachedSnapshots(ids, editingState: editingState)
                let updated = current.values.map { snapshot -> DefaultSnapshot in
                    var snapshot = snapshot
                    for (slot, value) in values { snapshot.values[slot] = value }
                    return snapshot
                }
                try checkUniqueness(inserted: [], updated: updated, deleted: [])
            }
            try channel.update(
                DataStoreBatchUpdateRequest<T>(identifiers: ids, values: values, editingState: editingState))
        } else {
            let snapshots = try loadSnapshots(ids, entity: entity, channel: channel).map {
                snapshot -> DefaultSnapshot in
                var snapshot = snapshot
                for (slot, value) in values { snapshot.values[slot] = value }
                return snapshot
            }
            try checkUniqueness(inserted: [], updated: snapshots, deleted: [])
            _ = try channel.save(
                DataStoreSaveChangesRequest(editingState: editingState, inserted: [], updated: snapshots, deleted: []))
        }
        refreshRegistered(ids, entity: entity, channel: channel)
        didSave(inserted: [], updated: ids, deleted: [], historyTokens: [])
        return ids.count
    }

    /// Inserts many models of a type at once, from values, without creating model objects.
    /// Properties not assigned take their declared initial value. Returns the new identifiers in
    /// order (as runs of keys where the store minted them so: see ``PersistentIdentifiers``).
    ///
    /// `rows` is read once, row by row, and a store that can take a batch in chunks (every store that
    /// ships with ModelStore but the append log) gets the rows as snapshots a few thousand at a
    /// time, so a large data set from a lazy sequence (`records.lazy.map { … }`) is never all in
    /// memory as snapshots. The insert is atomic all the same: a row that fails (a value that does
    /// not encode, a unique value already taken) leaves the store as it was.
    @discardableResult
    @inlinable
    public func insert<T: PersistentModel>(_ type: T.Type, rows: some Sequence<[BatchAssignment<T>]>) throws
        -> PersistentIdentifiers
    {
        // Inlinable, so that this loop is specialized for the caller's model type: unspecialized, it
        // looked up the generic metadata of `BatchAssignment<T>` for every row and walked the rows
        // through unspecialized array code, which cost more than the rest of the loop.
        let entity = try self.entity(of: T.self)
        let expectedCount = rows.underestimatedCount
        // What the chunks share, copied into locals for each chunk: a variable the closure captures
        // lives in a box whose every access is checked for exclusivity at run time, which cost more
        // per row than building the row.
        var state = (slots: BatchSlots(entity: entity, modelType: T.self), rows: rows.makeIterator())
        return try insert(entity: entity, expectedCount: expectedCount) {
            var (slots, rows) = state
            defer { state = (slots, rows) }
            // Every row's values go into one array for the chunk. A row starts as `nil`s (no copy to
            // make or release), takes the values it sets, and then the defaults of the slots it left
            // alone, which the bits of `set` name (for a model of more than 64 properties, the
            // defaults go in first).
            let width = slots.defaults.count
            var chunk = BatchRows(entity: entity, capacity: Swift.min(max(expectedCount, 16), BatchSlots.chunkSize))
            while chunk.count < BatchSlots.chunkSize, let row = rows.next() {
                let start = chunk.values.count
                var set: UInt64 = 0
                if width <= 64 {
                    for _ in 0..<width { chunk.values.append(.null) }
                } else {
                    chunk.values.append(contentsOf: slots.defaults)
                }
                for position in row.indices {
                    let slot = try slots.slot(of: row[position].keyPath, at: position)
                    chunk.values[start + slot] = try row[position].value()
                    set |= 1 &<< UInt64(slot & 63)
                }
                if width <= 64, set != (width == 64 ? ~0 : (1 &<< UInt64(width)) &- 1) {
                    for slot in 0..<width where set & (1 &<< UInt64(slot)) == 0 {
                        chunk.values[start + slot] = slots.defaults[slot]
                    }
                }
                chunk.count += 1
            }
            return chunk
        }
    }

    /// The batch insert of rows that `nextChunk` makes a chunk at a time (an empty chunk after the
    /// last). A store that enforces uniqueness itself and takes batches reads the chunks as it
    /// writes; otherwise every chunk is read first and inserted with ``insert(snapshots:)``, which
    /// checks uniqueness in the context.
    @usableFromInline
    func insert(
        entity: Schema.Entity, expectedCount: Int, nextChunk: @escaping () throws -> BatchRows
    ) throws -> PersistentIdentifiers {
        let channel = try container.channel(for: entity.name)
        try channel.requireAllowsSave("a batch insert of '\(entity.name)'")
        let first = try nextChunk()
        guard first.count > 0 else { return [] }
        guard channel.takesBatches, entity.uniquenessConstraints.isEmpty || channel.enforcesUniqueness else {
            var all = first.snapshots()
            all.reserveCapacity(max(expectedCount, first.count))
            while case let chunk = try nextChunk(), chunk.count > 0 { all += chunk.snapshots() }
            return try insert(snapshots: all)
        }
        NotificationCenter.default.post(name: Self.willSave, object: self)
        var pending: BatchRows? = first
        let ids = try channel.insert(
            batch: DataStoreBatchInsertRequest(
                expectedCount: max(expectedCount, first.count), editingState: editingState
            ) { () throws -> BatchRows in
                if let chunk = pending {
                    pending = nil
                    return chunk
                }
                return try nextChunk()
            })
        didSave(inserted: ids.array, updated: [], deleted: [], historyTokens: [])
        return ids
    }

    /// Inserts snapshots (under temporary identifiers) at once, without creating model objects.
    /// Returns the permanent identifiers in order (as runs of keys where the store minted them so).
    @discardableResult
    public func insert(snapshots: [DefaultSnapshot]) throws -> PersistentIdentifiers {
        guard let first = snapshots.first else { return [] }
        let channel = try container.channel(for: first.entity.name)
        try channel.requireAllowsSave("a batch insert of '\(first.entity.name)'")
        try checkUniqueness(inserted: snapshots, updated: [], deleted: [])
        NotificationCenter.default.post(name: Self.willSave, object: self)
        let ids: PersistentIdentifiers
        if channel.takesBatches {
            ids = try channel.insert(
                batch: DataStoreBatchInsertRequest(snapshots: snapshots, editingState: editingState))
        } else {
            let result = try channel.save(
                DataStoreSaveChangesRequest(editingState: editingState, inserted: snapshots, updated: [], deleted: []))
            let remapped = result.remappedIdentifiers
            ids = PersistentIdentifiers(
                snapshots.lazy.map { remapped[$0.persistentIdentifier] ?? $0.persistentIdentifier })
        }
        didSave(inserted: ids.array, updated: [], deleted: [], historyTokens: [])
        return ids
    }

    private func loadSnapshots(_ ids: [PersistentIdentifier], entity: Schema.Entity, channel: StoreChannel) throws
        -> [DefaultSnapshot]
    {
        let found = try channel.storedSnapshots(identifiedBy: ids, of: entity, editingState: editingState)
        return ids.compactMap { found[$0] }
    }

    private func refreshRegistered(_ ids: [PersistentIdentifier], entity: Schema.Entity, channel: StoreChannel) {
        let registered = ids.filter { registry[$0] != nil }
        guard !registered.isEmpty, let snapshots = try? loadSnapshots(registered, entity: entity, channel: channel)
        else {
            return
        }
        for snapshot in snapshots {
            guard let model = registry[snapshot.persistentIdentifier], !model.persistentBackingData.isChanged else {
                continue
            }
            try? entity.layout(of: model).reload(snapshot.values, into: model)
            model.persistentBackingData.keepSavedValues(snapshot.values)
        }
    }
}

/// The slots a batch insert's key paths set, and the values of the slots a row leaves alone.
@usableFromInline
package struct BatchSlots {
    /// How many rows a batch insert turns into snapshots at a time.
    @usableFromInline package static let chunkSize = 4_096

    @usableFromInline let entity: Schema.Entity
    /// Each property's value on a new model, in slot order.
    @usableFromInline let defaults: [StoreValue]
    /// The previous row's key path and slot at each position: rows usually set the same key paths
    /// in the same order, so the one at a position is tried first, by identity, before hashing it.
    @usableFromInline var previous: [(keyPath: AnyKeyPath, slot: Int)] = []
    private var cache: [AnyKeyPath: Int] = [:]

    @usableFromInline
    package init(entity: Schema.Entity, modelType: (any PersistentModel.Type)? = nil) {
        self.entity = entity
        // In a hierarchy's entity a new model's values depend on its class: its own initial values,
        // empty slots for the other classes' properties, and its class's name.
        if entity.classAttribute != nil, let modelType, let layout = entity.layout(for: modelType),
            let values = try? layout.values(of: modelType.init())
        {
            defaults = values
            return
        }
        defaults = entity.properties.map(\.initialValue)
    }

    /// The slot the key path at `position` of a row sets.
    @inlinable
    package mutating func slot(of keyPath: AnyKeyPath, at position: Int) throws -> Int {
        if position < previous.count, previous[position].keyPath === keyPath { return previous[position].slot }
        return try resolve(keyPath, at: position)
    }

    /// Finds a key path's slot (cached by key path) and remembers it for `position`.
    @usableFromInline
    package mutating func resolve(_ keyPath: AnyKeyPath, at position: Int) throws -> Int {
        let slot: Int
        if let cached = cache[keyPath] {
            slot = cached
        } else {
            guard let name = entity.propertyName(for: keyPath), let found = entity.slot(of: name) else {
                throw DataStoreError(
                    .invalidValue, "a batch insert of '\(entity.name)' sets a key path that is not stored",
                    remedy: "Use key paths to @Attribute properties", entityName: entity.name)
            }
            cache[keyPath] = found
            slot = found
        }
        if position < previous.count {
            previous[position] = (keyPath, slot)
        } else {
            previous.append((keyPath, slot))
        }
        return slot
    }
}
