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
    /// Models under permanent identifiers with integer keys: what fetches and saves register.
    private var keyed = KeyedModels()
    /// Models under every other identifier: temporary ones, and string keys.
    private var table: [PersistentIdentifier: any PersistentModel] = [:]
    /// Models registered under a temporary identifier (their backing data's), not yet in ``table``.
    private var unfiled: [any PersistentModel] = []
    /// How many of ``table``'s keys are temporary identifiers.
    private var filedTemporaries = 0

    /// How many models are registered.
    var count: Int { keyed.count + table.count + unfiled.count }

    /// The model registered under `id`, if any; setting `nil` removes it.
    subscript(id: PersistentIdentifier) -> (any PersistentModel)? {
        mutating get {
            if case .int(let key) = id.primaryKey, !id.isTemporary {
                return keyed.model(scope: id.scope, key: key)
            }
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

    /// Makes room for `count` more models under permanent identifiers of `id`'s store and entity.
    mutating func reserveCapacity(_ count: Int, like id: PersistentIdentifier) {
        guard case .int = id.primaryKey, !id.isTemporary else { return }
        keyed.reserve(count, scope: id.scope)
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
        if case .int(let key) = id.primaryKey, !id.isTemporary {
            return keyed.update(model, scope: id.scope, key: key)
        }
        if id.isTemporary { fileUnfiled() }
        let earlier = table.updateValue(model, forKey: id)
        if earlier == nil && id.isTemporary { filedTemporaries += 1 }
        return earlier
    }

    /// Removes and returns the model registered under `id`.
    @discardableResult
    mutating func removeValue(forKey id: PersistentIdentifier) -> (any PersistentModel)? {
        if case .int(let key) = id.primaryKey, !id.isTemporary {
            return keyed.remove(scope: id.scope, key: key)
        }
        if id.isTemporary { fileUnfiled() }
        let removed = table.removeValue(forKey: id)
        if removed != nil && id.isTemporary { filedTemporaries -= 1 }
        return removed
    }

    /// Every registered model with its identifier, as a list the caller may walk while it changes
    /// the registry.
    mutating func entries() -> [(id: PersistentIdentifier, model: any PersistentModel)] {
        fileUnfiled()
        var result: [(id: PersistentIdentifier, model: any PersistentModel)] = []
        result.reserveCapacity(count)
        keyed.forEachModel { result.append(($0, $1)) }
        for (id, model) in table { result.append((id, model)) }
        return result
    }

    /// Every registered model, in no particular order.
    var models: [any PersistentModel] {
        var result: [any PersistentModel] = []
        result.reserveCapacity(count)
        keyed.forEachModel { result.append($1) }
        result += table.values
        result += unfiled
        return result
    }

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

    /// Moves ``unfiled`` into the registry, each model under the identifier its backing data holds.
    private mutating func fileUnfiled() {
        guard !unfiled.isEmpty else { return }
        let models = unfiled
        unfiled = []
        // The table grows once, for the models left when the first one that goes into it comes: a
        // save's new models all go to the keyed pages, and a table reserved for them all would
        // stay that size, empty.
        var reserved = false
        for (position, model) in models.enumerated() {
            guard let id = model.persistentBackingData.persistentIdentifier else {
                preconditionFailure("a model was registered without an identifier")
            }
            if case .int(let key) = id.primaryKey, !id.isTemporary {
                _ = keyed.update(model, scope: id.scope, key: key)
                continue
            }
            if !reserved {
                reserved = true
                let needed = table.count + models.count - position
                if table.capacity < needed { table.reserveCapacity(needed) }
            }
            if table.updateValue(model, forKey: id) == nil && id.isTemporary { filedTemporaries += 1 }
        }
    }
}

/// Models under permanent identifiers with integer keys, kept per store and entity: in a hash
/// table while they are few or their keys scattered, and in pages of 256 consecutive keys once
/// they are many and dense.
///
/// A fetch of a whole table registers models in key order, so successive models land side by side
/// in one page, found without hashing (the page of the last access is remembered), where a hash
/// table puts each at a random place: at a million models, a cache miss apiece. A page costs a
/// reference's width per key, against a hash table's bucket with its spare room. A few models, or
/// models whose keys are far apart (a fetch of one, or of a scattered subset), would leave pages
/// nearly empty, so they stay in the hash table.
struct KeyedModels {
    private static let shift: Int64 = 8
    private static let pageSize = 1 << 8

    private struct Page {
        var models: [(any PersistentModel)?]
        var count = 0
    }

    /// The models of one store's entity.
    private struct Namespace {
        let scope: PersistentIdentifier.Scope
        /// The models while the namespace is not paged.
        var table: [Int64: any PersistentModel] = [:]
        /// The smallest and largest key put in ``table``.
        var lowest = Int64.max
        var highest = Int64.min
        var isPaged = false
        var pages: [Page] = []
        /// The position in ``pages`` of each page, by page number (the key shifted right).
        var positions: [Int64: Int] = [:]
        /// The last page looked up: its number and position.
        var lastNumber: Int64 = .min
        var lastPosition = 0

        /// The position of page `number`, remembering it.
        @inline(__always)
        mutating func position(of number: Int64) -> Int? {
            if number == lastNumber { return lastPosition }
            guard let position = positions[number] else { return nil }
            lastNumber = number
            lastPosition = position
            return position
        }

        /// Puts `model` under `key` in a page, making the page if there is none; returns the model
        /// there before.
        mutating func place(_ model: any PersistentModel, at key: Int64) -> (any PersistentModel)? {
            let number = key >> KeyedModels.shift
            let page: Int
            if let found = position(of: number) {
                page = found
            } else {
                // Reserved and appended: `Array(repeating:count:)` takes the standard library's
                // slow, unspecialized allocation path on Linux.
                var models: [(any PersistentModel)?] = []
                models.reserveCapacity(KeyedModels.pageSize)
                for _ in 0..<KeyedModels.pageSize { models.append(nil) }
                page = pages.count
                pages.append(Page(models: models))
                positions[number] = page
                lastNumber = number
                lastPosition = page
            }
            let slot = Int(key & Int64(KeyedModels.pageSize - 1))
            let earlier = pages[page].models[slot]
            pages[page].models[slot] = model
            if earlier == nil { pages[page].count += 1 }
            return earlier
        }

        /// Moves the hash table's models into pages, when they are at least `threshold` and at least
        /// a quarter of the keys between the smallest and the largest.
        mutating func pageIfDense(threshold: Int) {
            guard table.count >= threshold,
                UInt64(bitPattern: highest &- lowest) / 4 < UInt64(table.count)
            else { return }
            let models = table
            table = [:]
            isPaged = true
            for (key, model) in models { _ = place(model, at: key) }
        }
    }

    private var namespaces: [Namespace] = []
    private var lastNamespace = 0
    /// How many models are registered.
    private(set) var count = 0
    /// How many models a namespace holds in its hash table before it considers pages.
    let pagingThreshold: Int

    /// An empty registry part; tests lower `pagingThreshold` to reach pages with few models.
    init(pagingThreshold: Int = 4096) { self.pagingThreshold = pagingThreshold }

    @inline(__always)
    private mutating func namespace(scope: PersistentIdentifier.Scope, creating: Bool) -> Int? {
        if lastNamespace < namespaces.count, namespaces[lastNamespace].scope == scope {
            return lastNamespace
        }
        if let found = namespaces.firstIndex(where: { $0.scope == scope }) {
            lastNamespace = found
            return found
        }
        guard creating else { return nil }
        namespaces.append(Namespace(scope: scope))
        lastNamespace = namespaces.count - 1
        return lastNamespace
    }

    /// The model registered under the key.
    mutating func model(scope: PersistentIdentifier.Scope, key: Int64) -> (any PersistentModel)? {
        guard let space = namespace(scope: scope, creating: false) else { return nil }
        guard namespaces[space].isPaged else { return namespaces[space].table[key] }
        guard let page = namespaces[space].position(of: key >> Self.shift) else { return nil }
        return namespaces[space].pages[page].models[Int(key & Int64(Self.pageSize - 1))]
    }

    /// Registers `model` under the key; returns the model registered under it before, if any.
    mutating func update(
        _ model: any PersistentModel, scope: PersistentIdentifier.Scope, key: Int64
    ) -> (any PersistentModel)? {
        let space = namespace(scope: scope, creating: true)!
        let earlier: (any PersistentModel)?
        if namespaces[space].isPaged {
            earlier = namespaces[space].place(model, at: key)
        } else {
            earlier = namespaces[space].table.updateValue(model, forKey: key)
            namespaces[space].lowest = min(namespaces[space].lowest, key)
            namespaces[space].highest = max(namespaces[space].highest, key)
            if earlier == nil { namespaces[space].pageIfDense(threshold: pagingThreshold) }
        }
        if earlier == nil { count += 1 }
        return earlier
    }

    /// Makes room for `count` more models of one store's entity: a namespace about to hold many
    /// models in its hash table grows the table once.
    mutating func reserve(_ count: Int, scope: PersistentIdentifier.Scope) {
        let space = namespace(scope: scope, creating: true)!
        guard !namespaces[space].isPaged else { return }
        let needed = min(namespaces[space].table.count + count, pagingThreshold)
        if namespaces[space].table.capacity < needed { namespaces[space].table.reserveCapacity(needed) }
    }

    /// Removes and returns the model registered under the key. A page left empty is dropped.
    mutating func remove(scope: PersistentIdentifier.Scope, key: Int64) -> (any PersistentModel)? {
        guard let space = namespace(scope: scope, creating: false) else { return nil }
        guard namespaces[space].isPaged else {
            let removed = namespaces[space].table.removeValue(forKey: key)
            if removed != nil { count -= 1 }
            return removed
        }
        let number = key >> Self.shift
        guard let page = namespaces[space].position(of: number) else { return nil }
        let slot = Int(key & Int64(Self.pageSize - 1))
        guard let removed = namespaces[space].pages[page].models[slot] else { return nil }
        namespaces[space].pages[page].models[slot] = nil
        namespaces[space].pages[page].count -= 1
        count -= 1
        if namespaces[space].pages[page].count == 0 { dropPage(number, at: page, in: space) }
        return removed
    }

    /// Drops an empty page: the last page moves into its position.
    private mutating func dropPage(_ number: Int64, at position: Int, in space: Int) {
        let last = namespaces[space].pages.count - 1
        if position != last {
            let moved = namespaces[space].positions.first { $0.value == last }!.key
            namespaces[space].pages.swapAt(position, last)
            namespaces[space].positions[moved] = position
        }
        namespaces[space].pages.removeLast()
        namespaces[space].positions[number] = nil
        namespaces[space].lastNumber = .min
    }

    /// Calls `body` with each registered model and its identifier.
    func forEachModel(_ body: (PersistentIdentifier, any PersistentModel) -> Void) {
        for space in namespaces {
            let scope = space.scope
            for (key, model) in space.table {
                body(scope.identifier(key), model)
            }
            for (number, position) in space.positions {
                for (slot, model) in space.pages[position].models.enumerated() {
                    guard let model else { continue }
                    body(scope.identifier(number << Self.shift | Int64(slot)), model)
                }
            }
        }
    }
}
