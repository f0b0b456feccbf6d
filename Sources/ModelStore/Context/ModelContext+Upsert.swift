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
    func resolveDuplicateInserts() throws {
        guard duplicateInsertPolicy == .upsert else { return }
        var candidates: [String: [any PersistentModel]] = [:]
        for model in insertedModels.models where model.persistentBackingData.state == .inserted {
            let name = model.persistentModelID.entityName
            guard let entity = container.schema.entity(named: name), !entity.uniquenessConstraints.isEmpty else {
                continue
            }
            candidates[name, default: []].append(model)
        }
        for (name, models) in candidates.sorted(by: { $0.key < $1.key }) {
            let entity = try self.entity(named: name)
            var lookup = try DuplicateLookup(entity: entity, store: try container.store(for: name), context: self)
            for model in models {
                guard let kept = try lookup.keptModel(matching: model) else { continue }
                fold(model, into: kept, layout: entity.layout)
            }
        }
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
/// stored one (read through the store's query when it can run equality, else from all its rows),
/// or one inserted earlier in the same save.
private struct DuplicateLookup {
    let entity: Schema.Entity
    let store: any DataStore
    let context: ModelContext
    /// Each constraint's property slots.
    let constraints: [(names: [String], slots: [Int])]
    /// Values claimed by models inserted earlier in this save, per constraint.
    var claimed: [[[StoreValue]: any PersistentModel]]
    /// Every stored row, read once, for a store that cannot run the lookup query.
    var allRows: [DefaultSnapshot]?

    init(entity: Schema.Entity, store: any DataStore, context: ModelContext) throws {
        self.entity = entity
        self.store = store
        self.context = context
        constraints = entity.uniquenessConstraints.map { names in
            (names, names.compactMap { name in entity.attributes.first { $0.name == name }?.slot })
        }
        claimed = Array(repeating: [:], count: constraints.count)
    }

    /// The model `model` folds into, if any; otherwise records `model`'s values as claimed.
    mutating func keptModel(matching model: any PersistentModel) throws -> (any PersistentModel)? {
        let values = try entity.layout.values(of: model)
        for (index, constraint) in constraints.enumerated() where constraint.slots.count == constraint.names.count {
            let key = constraint.slots.map { values[$0] }
            guard !key.contains(.null) else { continue }
            if let earlier = claimed[index][key] { return earlier }
            if let stored = try storedModel(constraint.names, key) { return stored }
        }
        for (index, constraint) in constraints.enumerated() where constraint.slots.count == constraint.names.count {
            let key = constraint.slots.map { values[$0] }
            if !key.contains(.null) { claimed[index][key] = model }
        }
        return nil
    }

    /// The stored model with these values, as this context has it, unless the context deletes it
    /// or has changed it away from them.
    private mutating func storedModel(_ names: [String], _ key: [StoreValue]) throws -> (any PersistentModel)? {
        guard let filter = StoreFilter.conjunction(zip(names, key).map { StoreFilter.equal($0, $1) }) else {
            return nil
        }
        let evaluator = try SnapshotEvaluator(filter: filter, entity: entity, schema: context.container.schema)
        let rows: [DefaultSnapshot]
        if let capabilities = store.queryCapabilitiesIfAny,
            capabilities.filters.union(capabilities.inexactFilters).isSuperset(of: filter.kinds)
        {
            rows = try fetch(StoreQuery(entityName: entity.name, filter: filter))
        } else {
            if allRows == nil { allRows = try context.storedSnapshots(of: entity, in: store) }
            rows = allRows ?? []
        }
        guard let id = rows.first(where: evaluator.matches)?.persistentIdentifier,
            let model = try context.model(for: id)
        else { return nil }
        let backing = model.persistentBackingData
        guard backing.state == .registered,
            let current = try? entity.layout.values(of: model),
            zip(names, key).allSatisfy({ name, value in
                entity.attributes.first { $0.name == name }.map { current[$0.slot] == value } ?? false
            })
        else { return nil }
        return model
    }

    private func fetch(_ query: StoreQuery) throws -> [DefaultSnapshot] {
        func open<M: PersistentModel>(_ type: M.Type) throws -> [DefaultSnapshot] {
            var descriptor = FetchDescriptor<M>()
            descriptor.includePendingChanges = false
            return try store.fetchDefault(
                DataStoreFetchRequest(descriptor: descriptor, editingState: context.editingState, query: query)
            ).snapshots
        }
        return try open(entity.modelType)
    }
}
