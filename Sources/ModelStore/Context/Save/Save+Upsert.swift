import Foundation

/// What a save does with an inserted model whose unique values another model already has: the
/// value of an `@Attribute(.unique)` attribute, or every value of a compound
/// ``ModelConstraint/unique(_:)`` constraint.
public enum DuplicateInsertPolicy: Sendable, Hashable, CustomStringConvertible {
    /// SwiftData's behaviour, the default: the save updates the model that has the values (an
    /// upsert) instead of inserting a second one.
    ///
    /// The model the context keeps is the one already stored (or, for two inserts in one save,
    /// the first inserted). It takes every attribute value of the inserted model, its to-one
    /// relationships that are set, and the models of its to-many relationships in addition to
    /// its own. The inserted object leaves the context, and its ``PersistentModel/persistentModelID``
    /// becomes the kept model's identifier, so `context.model(for: inserted.persistentModelID)`
    /// finds the model that holds its values. A model with a `nil` among its unique values never
    /// matches another.
    case upsert
    /// The save throws ``DataStoreError/Code/uniqueConstraintViolation`` naming the entity, the
    /// properties and the values, and stores nothing.
    case error

    /// The policy's name.
    public var description: String {
        switch self {
        case .upsert: "upsert"
        case .error: "error"
        }
    }
}

extension ModelContext {
    /// Under ``DuplicateInsertPolicy/upsert``, folds each inserted model whose unique values a
    /// stored model (or an earlier inserted one) has into that model; the first step of a save.
    /// Returns whether it folded any.
    @discardableResult
    func resolveDuplicateInserts() throws -> Bool {
        try resolveDuplicateInserts(alreadyRead: [:])
    }

    /// The same for an asynchronous save: the store reads that find the stored models are awaited
    /// first (an asynchronous store is never called synchronously), then the models are folded.
    func resolveDuplicateInsertsAsync() async throws {
        var read: [StoreQuery: [DefaultSnapshot]] = [:]
        for (name, models) in try duplicateCandidates() {
            let entity = try self.entity(named: name)
            let channel = try container.channel(for: name)
            // A store without queries is read synchronously, as every fetch of it is.
            guard channel.isAsynchronous, channel.capabilities != nil else { continue }
            let keys = try DuplicateLookup.keys(of: models, in: entity)
            for query in DuplicateLookup.queries(for: keys, entity: entity, capabilities: channel.capabilities) {
                let query = query ?? StoreQuery(entityName: entity.name)
                guard read[query] == nil else { continue }
                read[query] = try await channel.storedSnapshotsAsync(
                    of: entity, matching: query, editingState: editingState)
            }
        }
        try resolveDuplicateInserts(alreadyRead: read)
    }

    /// The inserted models of entities with unique constraints, by entity name, in name order.
    ///
    /// Throws, as the save's snapshots would, for a model whose type is not the container's type
    /// for its entity name (another schema version's type): the entity's layout would read and
    /// write that object at the wrong offsets.
    private func duplicateCandidates() throws -> [(String, [any PersistentModel])] {
        guard duplicateInsertPolicy == .upsert else { return [] }
        var candidates: [String: [any PersistentModel]] = [:]
        // Inserts come in runs of one type: the entity is looked up once per run, not per model.
        var last: (type: ObjectIdentifier, name: String, entity: Schema.Entity?)?
        for model in insertedModels.models where model.persistentBackingData.state == .inserted {
            let type = ObjectIdentifier(Swift.type(of: model))
            let name = model.persistentModelID.entityName
            if last?.type != type || last?.name != name {
                last = (type, name, container.schema.entity(named: name))
                if let entity = last?.entity, !entity.uniquenessConstraints.isEmpty {
                    try Self.check(Swift.type(of: model), is: entity)
                }
            }
            guard let entity = last?.entity, !entity.uniquenessConstraints.isEmpty else { continue }
            candidates[name, default: []].append(model)
        }
        return candidates.sorted { $0.key < $1.key }
    }

    /// Folds the duplicates, reading the stored rows each lookup query selects (`nil`: every row)
    /// unless `alreadyRead` holds them.
    @discardableResult
    private func resolveDuplicateInserts(alreadyRead: [StoreQuery: [DefaultSnapshot]]) throws -> Bool {
        var folded = false
        for (name, models) in try duplicateCandidates() {
            let entity = try self.entity(named: name)
            let channel = try container.channel(for: name)
            var lookup = try DuplicateLookup(models, entity: entity, capabilities: channel.capabilities, context: self)
            {
                query in
                if let rows = alreadyRead[query ?? StoreQuery(entityName: entity.name)] { return rows }
                return try channel.storedSnapshots(of: entity, matching: query, editingState: self.editingState)
            }
            for (index, model) in models.enumerated() {
                guard let kept = try lookup.keptModel(matching: model, at: index) else { continue }
                // Across two classes of a hierarchy only the root's fields are common to both.
                let common = Swift.type(of: model) == Swift.type(of: kept) ? entity.layout(of: kept) : entity.layout
                fold(model, into: kept, layout: common)
                folded = true
            }
        }
        return folded
    }

    /// Moves an inserted model's values and related models into `kept`, then lets the inserted
    /// object go with `kept`'s identifier.
    private func fold(_ inserted: any PersistentModel, into kept: any PersistentModel, layout: ModelLayout) {
        let keptBacking = kept.persistentBackingData
        var changed = false
        for field in layout.attributes {
            guard let value = try? field.storeValue(of: inserted),
                (try? field.storeValue(of: kept)).map({ !$0.isIdentical(to: value) }) ?? true
            else { continue }
            try? field.load(value, into: kept)
            changed = true
        }
        if changed {
            keptBacking.didMutate(kept)
            keptBacking.storedValuesDidChange()
        }
        for field in layout.relationships {
            let moving = field.models(of: inserted)
            guard !moving.isEmpty else { continue }
            if field.isToMany {
                field.setModels(field.models(of: kept) + moving, of: kept)
                field.replaceModels([], of: inserted)
            } else {
                field.setModels(moving, of: kept)
                field.setModels([], of: inserted)
            }
        }
        let backing = inserted.persistentBackingData
        insertedModels.remove(inserted)
        detach(inserted)
        backing.persistentIdentifier = kept.persistentModelID
    }
}

/// Finds, for inserted models of one entity, the model that already has their unique values: a
/// stored one, or one inserted earlier in the same save.
///
/// The stored candidates are read up front, a few queries per constraint whatever the number of
/// inserted models: their values in chunks (`IN` for one property, `OR` of `AND`s for several)
/// when the store runs those filters, or every row once when it does not.
///
/// A save may insert a hundred thousand models, so each model's keys are computed once, from its
/// unique attributes alone, and kept by position; each key is hashed three times (deduplicated for
/// the queries, looked up and recorded among the claimed keys) and stored rows are looked up only
/// when there are some.
private struct DuplicateLookup {
    /// One constraint's values in one inserted model.
    struct Key: Hashable {
        let constraint: Int
        let values: [StoreValue]
    }

    /// How many keys one query asks for.
    static let chunkSize = 500

    let entity: Schema.Entity
    let context: ModelContext
    /// Each inserted model's keys, in the models' order.
    let keysOfModels: [[Key]]
    /// The stored row holding each key, among those asked for.
    var stored: [Key: DefaultSnapshot] = [:]
    /// Keys claimed by models inserted earlier in this save.
    var claimed: [Key: any PersistentModel]

    init(
        _ models: [any PersistentModel], entity: Schema.Entity, capabilities: QueryCapabilities?, context: ModelContext,
        rows: (StoreQuery?) throws -> [DefaultSnapshot]
    ) throws {
        self.entity = entity
        self.context = context
        let keysOfModels = try Self.keys(of: models, in: entity)
        self.keysOfModels = keysOfModels
        claimed = Dictionary(minimumCapacity: keysOfModels.reduce(0) { $0 + $1.count })
        let slots = Self.constraintSlots(of: entity)
        // Every row (a store that cannot run the filters) holds keys nobody asked for: only the
        // wanted ones are kept. A filtered query returns rows that hold a wanted key.
        var wanted: Set<Key>?
        for query in Self.queries(for: keysOfModels, entity: entity, capabilities: capabilities) {
            if query == nil { wanted = Set(keysOfModels.joined()) }
            for row in try rows(query) {
                let keys = Self.keys(slots, value: { row.values.indices.contains($0) ? row.values[$0] : nil })
                for key in keys where stored[key] == nil && wanted?.contains(key) != false {
                    stored[key] = row
                }
            }
        }
    }

    /// The slots of each constraint of the entity: its attributes' and to-one relationships' (whose
    /// values are the related models' identifiers); `nil` for a constraint that names another
    /// property (it never matches).
    static func constraintSlots(of entity: Schema.Entity) -> [[Int]?] {
        entity.uniquenessConstraints.map { names in
            let slots = names.compactMap { name -> Int? in
                switch entity.property(named: name) {
                case .attribute(let attribute): attribute.slot
                case .relationship(let relationship) where relationship.isToOne: relationship.slot
                default: nil
                }
            }
            return slots.count == names.count ? slots : nil
        }
    }

    /// Each model's keys, in the models' order, read from the models' unique properties alone.
    ///
    /// A value that cannot be stored throws the save's own error, which names the property.
    static func keys(of models: [any PersistentModel], in entity: Schema.Entity) throws -> [[Key]] {
        let slots = constraintSlots(of: entity)
        if entity.classAttribute != nil {
            // A hierarchy's slots are not its classes' field indices: read whole values.
            return try models.map { model in
                let values = try entity.layout(of: model).values(of: model)
                return keys(slots) { values.indices.contains($0) ? values[$0] : nil }
            }
        }
        let fields = entity.layout.fields
        return try models.map { model in
            do {
                return try keys(slots) { slot in try fields[slot].storeValue(of: model) }
            } catch {
                _ = try entity.layout.values(of: model)
                throw error
            }
        }
    }

    /// The keys of one set of values: one per constraint whose values hold no `nil` (a `nil` never
    /// matches), each value read by its slot (`nil`: the values lack the slot).
    static func keys(_ slots: [[Int]?], value: (Int) throws -> StoreValue?) rethrows -> [Key] {
        var keys: [Key] = []
        for (constraint, slots) in slots.enumerated() {
            guard let slots else { continue }
            var values: [StoreValue] = []
            values.reserveCapacity(slots.count)
            for slot in slots {
                guard let value = try value(slot) else { break }
                if case .null = value { break }
                values.append(value)
            }
            if values.count == slots.count { keys.append(Key(constraint: constraint, values: values)) }
        }
        return keys
    }

    /// The queries that read the stored rows holding the models' keys (in their order, each asked
    /// for once); `nil` stands for every row of the entity (a store that cannot run the filters),
    /// asked for once.
    static func queries(for keysOfModels: [[Key]], entity: Schema.Entity, capabilities: QueryCapabilities?)
        -> [StoreQuery?]
    {
        var queries: [StoreQuery?] = []
        var readsEveryRow = false
        var seen = Set<Key>(minimumCapacity: keysOfModels.reduce(0) { $0 + $1.count })
        let unique = keysOfModels.joined().filter { seen.insert($0).inserted }
        for constraint in entity.uniquenessConstraints.indices {
            let names = entity.uniquenessConstraints[constraint]
            let values = unique.filter { $0.constraint == constraint }.map(\.values)
            for start in stride(from: 0, to: values.count, by: chunkSize) {
                let chunk = values[start..<Swift.min(start + chunkSize, values.count)]
                let filter: StoreFilter =
                    names.count == 1
                    ? .isIn(StorePath(names[0]), chunk.map { $0[0] })
                    : .or(chunk.map { values in .and(zip(names, values).map { StoreFilter.equal($0, $1) }) })
                if let capabilities,
                    capabilities.filters.union(capabilities.inexactFilters).isSuperset(of: filter.kinds)
                {
                    queries.append(StoreQuery(entityName: entity.name, filter: filter))
                } else if !readsEveryRow {
                    readsEveryRow = true
                    queries.append(nil)
                }
            }
        }
        return queries
    }

    /// The model the inserted model at `index` folds into, if any; otherwise records its keys as claimed.
    mutating func keptModel(matching model: any PersistentModel, at index: Int) throws -> (any PersistentModel)? {
        let keys = keysOfModels[index]
        for key in keys {
            if let earlier = claimed[key] { return earlier }
            if !stored.isEmpty, let row = stored[key], let kept = try storedModel(row, key: key) { return kept }
        }
        for key in keys { claimed[key] = model }
        return nil
    }

    /// The stored model of `row`, as this context has it, unless the context deletes it or has
    /// changed it away from `key`'s values.
    private func storedModel(_ row: DefaultSnapshot, key: Key) throws -> (any PersistentModel)? {
        let model: any PersistentModel
        if let registered = context.registry[row.persistentIdentifier] {
            model = registered
        } else {
            func materialize<M: PersistentModel>(_ type: M.Type) throws -> (any PersistentModel)? {
                try context.materialize([row], as: type).first
            }
            guard let loaded = try materialize(entity.modelType) else { return nil }
            model = loaded
        }
        try? model.persistentBackingData.loadUnfetchedValues(of: model)
        guard model.persistentBackingData.state == .registered,
            let current = try? entity.layout(of: model).values(of: model),
            Self.keys(Self.constraintSlots(of: entity), value: { current.indices.contains($0) ? current[$0] : nil })
                .contains(key)
        else { return nil }
        return model
    }
}
