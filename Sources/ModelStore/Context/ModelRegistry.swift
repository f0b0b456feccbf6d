/// The models a context has registered, by identifier.
///
/// A model inserted under a temporary identifier is only appended to a list (``unfiled``): most
/// new models are saved before anything looks them up by that identifier, and the save files
/// them under their permanent one, so an insert of many models hashes each one once instead of
/// twice (under its temporary identifier at the insert, under its permanent one at the save). The
/// list is filed into the table before any look-up, removal or walk that could need it: a look-up
/// by a permanent identifier never does, since the list holds temporary identifiers only.
///
/// Invariants: every model in ``unfiled`` is in no other place of the registry and is listed once;
/// ``filedTemporaries`` counts the table's keys that are temporary identifiers.
struct ModelRegistry {
    private var table: [PersistentIdentifier: any PersistentModel] = [:]
    /// Models registered under a temporary identifier (their backing data's), not yet in ``table``.
    private var unfiled: [any PersistentModel] = []
    /// How many of ``table``'s keys are temporary identifiers.
    private var filedTemporaries = 0

    /// How many models are registered.
    var count: Int { table.count + unfiled.count }

    /// How many models the table can hold without growing.
    var capacity: Int { table.capacity }

    /// Makes room for `capacity` models.
    mutating func reserveCapacity(_ capacity: Int) { table.reserveCapacity(capacity) }

    /// The model registered under `id`, if any; setting `nil` removes it.
    subscript(id: PersistentIdentifier) -> (any PersistentModel)? {
        mutating get {
            if id.isTemporary { fileUnfiled() }
            return table[id]
        }
        set {
            if let newValue {
                update(newValue, forKey: id)
            } else {
                removeValue(forKey: id)
            }
        }
    }

    /// Registers a model the context has not registered before, under its backing data's identifier.
    mutating func add(new model: any PersistentModel, as id: PersistentIdentifier) {
        if id.isTemporary {
            unfiled.append(model)
        } else {
            update(model, forKey: id)
        }
    }

    /// Registers `model` under `id`; returns the model registered under it before, if any.
    mutating func updateValue(_ model: any PersistentModel, forKey id: PersistentIdentifier) -> (any PersistentModel)? {
        if id.isTemporary { fileUnfiled() }
        let earlier = table.updateValue(model, forKey: id)
        if earlier == nil && id.isTemporary { filedTemporaries += 1 }
        return earlier
    }

    /// Removes and returns the model registered under `id`.
    @discardableResult
    mutating func removeValue(forKey id: PersistentIdentifier) -> (any PersistentModel)? {
        if id.isTemporary { fileUnfiled() }
        let removed = table.removeValue(forKey: id)
        if removed != nil && id.isTemporary { filedTemporaries -= 1 }
        return removed
    }

    /// Every registered model with its identifier, as a dictionary the caller may walk while it
    /// changes the registry.
    mutating func entries() -> [PersistentIdentifier: any PersistentModel] {
        fileUnfiled()
        return table
    }

    /// Every registered model, in no particular order.
    var models: [any PersistentModel] { Array(table.values) + unfiled }

    /// Whether some model is filed in the table under a temporary identifier (a look-up by one
    /// filed the list), so that ``refile(renamed:)`` needs the models' temporary identifiers.
    var hasFiledTemporaries: Bool { filedTemporaries > 0 }

    /// Files the models a save gave permanent identifiers under those identifiers, which their
    /// backing data hold now. `renamed` lists each such model with the temporary identifier it
    /// had, where ``hasFiledTemporaries`` asked for it; models still in the unfiled list need none.
    mutating func refile(renamed: [(PersistentIdentifier, any PersistentModel)]) {
        if filedTemporaries > 0 {
            for (temporary, model) in renamed where table.removeValue(forKey: temporary) != nil {
                filedTemporaries -= 1
                update(model, forKey: model.persistentBackingData.persistentIdentifier ?? temporary)
            }
        }
        fileUnfiled()
    }

    private mutating func update(_ model: any PersistentModel, forKey id: PersistentIdentifier) {
        _ = updateValue(model, forKey: id)
    }

    /// Moves ``unfiled`` into the table, each model under the identifier its backing data holds.
    private mutating func fileUnfiled() {
        guard !unfiled.isEmpty else { return }
        let models = unfiled
        unfiled = []
        if table.capacity < table.count + models.count { table.reserveCapacity(table.count + models.count) }
        for model in models {
            guard let id = model.persistentBackingData.persistentIdentifier else {
                preconditionFailure("a model was registered without an identifier")
            }
            if table.updateValue(model, forKey: id) == nil && id.isTemporary { filedTemporaries += 1 }
        }
    }
}
