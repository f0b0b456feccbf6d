import Foundation

/// A scratchpad of models: where an app inserts, fetches, changes, deletes and saves. SwiftData's `ModelContext`.
///
/// Concurrency rules:
/// 1. A context and its models belong to one isolation domain (an actor, or one thread at a time).
///    They are not `Sendable`. **Why:** models are mutable objects the context tracks without locks.
///    **Practical advice:** pass ``PersistentIdentifier``s between actors and fetch them with
///    ``model(for:as:)`` in the receiving context; use ``ModelActor`` to own a context on a background actor.
/// 2. The container and the stores are `Sendable`: any number of contexts may use them at once.
/// 3. A save in one context is seen by the next fetch in any other context of the same container.
///    Models already registered in that other context are refreshed when a fetch returns them,
///    unless they have unsaved changes.
public final class ModelContext {
    /// The container whose stores this context reads and writes.
    public let container: ModelContainer
    /// The author recorded with this context's saves.
    public var author: String? {
        didSet { editingState = EditingState(id: editingState.id, author: author) }
    }
    /// Whether the context saves on its own soon after its models change, as SwiftData's does.
    ///
    /// On for the container's ``ModelContainer/mainContext``, off for every other context. The
    /// main context saves on the main actor's next turn after an insert, a delete or a change, so
    /// a burst of changes made in one turn is one save. A failed autosave goes to
    /// ``autosaveErrorHandler`` and to standard error, and leaves the changes pending, as a failed
    /// ``save()`` does. Only the main context autosaves: other contexts have no actor ModelStore
    /// knows to save on, so for them the property changes nothing; call ``save()``.
    @exclusivity(unchecked) public var autosaveEnabled = false {
        didSet { if autosaveEnabled && hasChanges { scheduleAutosave() } }
    }
    /// Called with the error of each failed autosave (after it is written to standard error).
    public var autosaveErrorHandler: ((any Error) -> Void)?
    /// Whether an autosave is scheduled on the main actor and has not run yet.
    @exclusivity(unchecked) var autosaveScheduled = false
    /// How a save resolves a model that another context or process changed since this context
    /// read it. ``MergePolicy/error`` by default, as in Core Data: the save throws rather than
    /// overwrite what the other side wrote; choose another policy to merge instead.
    public var mergePolicy: MergePolicy = .error
    /// What a save does with an inserted model whose unique values another model already has;
    /// the container's ``ModelContainer/duplicateInsertPolicy`` when the context is made.
    public var duplicateInsertPolicy: DuplicateInsertPolicy
    /// Whether models registered here take in what other contexts of the container save (Core
    /// Data's `automaticallyMergesChangesFromParent`); off by default. See ``mergePendingChanges()``.
    public var automaticallyMergesChanges = false {
        didSet { updateMergeObservation() }
    }
    private(set) var editingState: EditingState
    /// Identifiers other contexts saved since this context last merged, while it merges automatically.
    let pendingMerges = LockedValue<Set<PersistentIdentifier>>([])
    /// The container's ``ChangeHub`` observation feeding ``pendingMerges``.
    var mergeObservation: UUID?
    /// Whether this is the container's main context, which merges on the main actor as changes come.
    @exclusivity(unchecked) var mergesOnMainActor = false

    // The registry and the lists of changes are touched once or more per model on every insert,
    // fetch and save, from the context's isolation domain only, so a dynamic exclusivity check on
    // each access would guard nothing and cost a check per model on the hottest paths. The same holds
    // for the autosave flags and the undo manager, which every insert reads.
    @exclusivity(unchecked) var registry = ModelRegistry()
    @exclusivity(unchecked) var insertedModels = OrderedModels()
    @exclusivity(unchecked) var changedModels = OrderedModels()
    @exclusivity(unchecked) var deletedModels = OrderedModels()
    /// The layout ``layout(of:)`` returned last.
    @exclusivity(unchecked) private var lastLayout: ModelLayout?
    /// Relationships that failed to load, by model and property: the next save throws the first.
    var faultFailures: [FaultKey: DataStoreError] = [:]

    /// Records, while ``undoManager`` is set, how to undo the inserts, deletes and changes of
    /// stored properties and relationships made through this context, as SwiftData's does.
    ///
    /// `nil` by default. Set one to make changes undoable: ``UndoManager/undo()`` puts back the
    /// values, relationships, inserts and deletes of the newest group of changes, which stay
    /// unsaved changes until the next ``save()``; ``UndoManager/redo()`` applies them again. The
    /// changes between two calls of ``processPendingChanges()`` (which ``save()`` and the main
    /// context's autosave make) form one group unless you group them yourself with
    /// `beginUndoGrouping()` and `endUndoGrouping()`. ``rollback()`` clears the manager's stacks.
    /// Saving does not: an undo after a save changes the models back, to be saved again.
    @exclusivity(unchecked) public var undoManager: UndoManager? {
        didSet {
            for model in registry.models { model.persistentBackingData.tracksUndo = undoManager != nil }
        }
    }

    /// Registers `action` as the undo of a change just made, if the context has an undo manager.
    func registerUndo(_ action: @escaping (ModelContext) -> Void) {
        undoManager?.registerUndo(withTarget: self, handler: action)
    }

    /// Registers putting `value` back into `model`'s wrapped property as the undo of a write.
    func registerUndo<Model: PersistentModel, Value>(
        of model: Model, _ keyPath: ReferenceWritableKeyPath<Model, Value>, was value: Value
    ) {
        undoManager?.registerUndo(withTarget: model) { $0[keyPath: keyPath] = value }
    }

    /// What the models in this context hold: the context and its container, weakly.
    let membership: ContextMembership
    /// What the models this context let go of but that may still load relationships hold: the
    /// container alone (``reset()``).
    let containerMembership: ContextMembership

    /// A new context on a container.
    public init(_ container: ModelContainer) {
        self.container = container
        membership = ContextMembership(container: container)
        containerMembership = ContextMembership(container: container)
        self.editingState = EditingState()
        self.duplicateInsertPolicy = container.duplicateInsertPolicy
        for channel in container.channels { channel.store.initializeState(for: editingState) }
        membership.context = self
    }

    deinit {
        if let mergeObservation { container.changeHub.unobserve(mergeObservation) }
        for channel in container.channels { channel.store.invalidateState(for: editingState) }
    }

    // MARK: Pending changes

    /// Whether the context has inserts, changes or deletes not yet saved.
    public var hasChanges: Bool { !insertedModels.isEmpty || !changedModels.isEmpty || !deletedModels.isEmpty }
    /// The models inserted since the last save.
    public var insertedModelsArray: [any PersistentModel] { insertedModels.models }
    /// The models changed since the last save.
    public var changedModelsArray: [any PersistentModel] { changedModels.models }
    /// The models deleted since the last save.
    public var deletedModelsArray: [any PersistentModel] { deletedModels.models }

    /// Inserts a model, and every new model its relationships reach, to be stored on the next save.
    public func insert<T: PersistentModel>(_ model: T) {
        register(inserted: model)
        // Only the new model's graph: walking every pending model on each insert is quadratic. A
        // model type without relationships reaches nothing.
        guard let layout = layout(of: type(of: model)), !layout.relationships.isEmpty else { return }
        registerReachableModels(from: [model])
    }

    /// The layout that reads and writes a model's values in its entity's slots: its class's in the
    /// container's schema (which maps a subclass onto its hierarchy's entity), else its type's own.
    func storageLayout(of model: any PersistentModel) -> ModelLayout? {
        container.schema.layout(for: type(of: model)) ?? ModelLayout.of(existential: type(of: model))
    }

    /// The layout of a model type, remembered for the type this context asked about last: an
    /// insert or save of many models of one type looks it up once, without the cache's lock.
    func layout(of type: any PersistentModel.Type) -> ModelLayout? {
        if let lastLayout, ObjectIdentifier(lastLayout.modelType) == ObjectIdentifier(type) { return lastLayout }
        let layout = ModelLayout.of(existential: type)
        lastLayout = layout
        return layout
    }

    /// The identifier of a model about to be registered: its own, or a temporary one minted now.
    private func identifier(of model: any PersistentModel) -> PersistentIdentifier {
        let backing = model.persistentBackingData
        if let id = backing.persistentIdentifier { return id }
        guard let layout = layout(of: type(of: model)) else { return model.persistentModelID }
        return backing.identifier(entityName: layout.entityName)
    }

    func register(inserted model: any PersistentModel) {
        let backing = model.persistentBackingData
        switch backing.state {
        case .inserted, .registered:
            if backing.membership === membership { return }
        case .deleted:
            if backing.membership === membership {
                backing.state = backing.hasSavedValues ? .registered : .inserted
                deletedModels.remove(model)
                if backing.state == .inserted { insertedModels.append(model) }
                if backing.state == .registered && backing.isChanged { changedModels.append(model) }
                registerUndo { $0.delete(model) }
                return
            }
        case .detached:
            break
        }
        backing.membership = membership
        backing.state = .inserted
        backing.isChanged = false
        backing.tracksUndo = undoManager != nil
        registry.add(new: model, as: identifier(of: model))
        // New to this context (its state said so above), so not in the list.
        insertedModels.appendNew(model)
        if undoManager != nil { registerUndo { $0.delete(model) } }
        scheduleAutosave()
    }

    /// Inserts every unregistered model reachable through the loaded relationships of inserted and changed models.
    public func processPendingChanges() {
        registerReachableModels(from: insertedModels.models + changedModels.models)
        #if !canImport(Darwin)
            undoManager?.endAutomaticGroup()
        #endif
    }

    private func registerReachableModels(from models: [any PersistentModel]) {
        var queue = models.filter { layout(of: type(of: $0))?.relationships.isEmpty == false }
        guard !queue.isEmpty else { return }
        var seen = Set(queue.map { ObjectIdentifier($0) })
        while let model = queue.popLast() {
            guard let layout = layout(of: type(of: model)), !layout.relationships.isEmpty else { continue }
            for relationship in layout.relationships {
                for related in relationship.loadedModels(of: model) {
                    guard let related = related as? any PersistentModel, seen.insert(ObjectIdentifier(related)).inserted
                    else {
                        continue
                    }
                    if related.persistentBackingData.state == .detached {
                        register(inserted: related)
                        queue.append(related)
                    }
                }
            }
        }
    }

    /// Marks a model for deletion on the next save. Delete rules apply at save.
    ///
    /// A model inserted since the last save is deleted the same way: the save stores nothing of it
    /// and removes it from every relationship that lists it, following the delete rules.
    public func delete<T: PersistentModel>(_ model: T) {
        let backing = model.persistentBackingData
        guard backing.membership === membership else { return }
        switch backing.state {
        case .inserted:
            insertedModels.remove(model)
            backing.state = .deleted
            deletedModels.append(model)
        case .registered:
            // The delete records the model's stored values (history, delete rules): all of them.
            try? backing.loadUnfetchedValues(of: model)
            backing.state = .deleted
            changedModels.remove(model)
            deletedModels.append(model)
        case .deleted, .detached:
            return
        }
        registerUndo { $0.insert(model) }
        scheduleAutosave()
    }

    func detach(_ model: any PersistentModel) {
        let backing = model.persistentBackingData
        registry[model.persistentModelID] = nil
        backing.state = .detached
        backing.isChanged = false
        backing.tracksUndo = false
        backing.membership = nil
    }

    func modelDidChange(_ model: AnyObject) {
        guard let model = model as? any PersistentModel else { return }
        changedModels.append(model)
        scheduleAutosave()
    }

    // MARK: Autosave

    /// Asks the main actor to save this context on its next turn, once per burst of changes.
    func scheduleAutosave() {
        guard autosaveEnabled, mergesOnMainActor, !autosaveScheduled else { return }
        autosaveScheduled = true
        Task { @MainActor [weak container] in container?.autosaveMainContext() }
    }

    /// The scheduled autosave: saves what is pending and reports a failure, never dropping it.
    func autosave() {
        autosaveScheduled = false
        guard autosaveEnabled, hasChanges else { return }
        do {
            try save()
        } catch {
            FileHandle.standardError.write(
                Data("[ModelStore] autosave failed, the changes are still pending: \(error)\n".utf8))
            autosaveErrorHandler?(error)
        }
    }

    /// Discards every unsaved insert, change and delete, restoring the last saved values.
    ///
    /// Every model whose stored properties changed, on either side of a relationship, gets its saved
    /// values back, so both sides of every relationship are again as stored.
    public func rollback() {
        for model in insertedModels.models { detach(model) }
        for model in changedModels.models { restoreSavedValues(of: model) }
        for model in deletedModels.models {
            if model.persistentModelID.isTemporary {
                detach(model)  // deleted before its first save: it was an insert
            } else {
                model.persistentBackingData.state = .registered
                restoreSavedValues(of: model)
            }
        }
        insertedModels.removeAll()
        changedModels.removeAll()
        deletedModels.removeAll()
        faultFailures.removeAll()
        undoManager?.removeAllActions()
    }

    private func restoreSavedValues(of model: any PersistentModel) {
        let backing = model.persistentBackingData
        guard backing.isChanged else { return }
        if let layout = storageLayout(of: model), let saved = backing.savedValues(of: model, layout: layout) {
            // Saved values came from the store through the same codecs: they decode.
            try? layout.reload(saved, into: model)
        }
        backing.isChanged = false
    }

    /// Runs `block`, then saves; if either throws, rolls back and rethrows.
    public func transaction(block: () throws -> Void) throws {
        do {
            try block()
            try save()
        } catch {
            rollback()
            throw error
        }
    }

    // MARK: Registered models

    /// The model with this identifier if this context has it registered; never reads the store.
    public func registeredModel<T: PersistentModel>(for id: PersistentIdentifier, as type: T.Type = T.self) -> T? {
        registry[id] as? T
    }

    /// The model with this identifier, from the context or else its store; `nil` if it doesn't exist.
    public func model<T: PersistentModel>(for id: PersistentIdentifier, as type: T.Type = T.self) throws -> T? {
        if let model = registry[id] { return model as? T }
        guard id.entityName == Schema.entityName(for: T.self), !id.isTemporary else { return nil }
        return try loadModels([id], as: T.self).first
    }

    /// The model with this identifier, of whatever type its entity has: SwiftData's untyped
    /// `model(for:)`. From the context, or else its store; `nil` if it doesn't exist.
    ///
    /// Unlike SwiftData's, which hands out a model that traps when read if the store has no such
    /// model, this one reads the store at once, so it can throw and returns `nil` for a model that
    /// is not there. Cast the result (`as? Trip`), or use ``model(for:as:)`` when you know the type.
    public func model(for id: PersistentIdentifier) throws -> (any PersistentModel)? {
        if let model = registry[id] { return model }
        guard let entity = container.schema.entity(named: id.entityName) else { return nil }
        func load<T: PersistentModel>(_ type: T.Type) throws -> (any PersistentModel)? {
            try model(for: id, as: type)
        }
        return try load(entity.modelType)
    }

    /// Forgets every registered model that has no unsaved changes, so later reads come from the store.
    public func reset() {
        for (id, model) in registry.entries() where !model.hasChanges {
            registry[id] = nil
            let backing = model.persistentBackingData
            backing.state = .detached
            backing.membership = containerMembership
        }
    }
}

/// Models in insertion order, with constant-time membership.
///
/// The membership set is built on first need: a caller that knows a model is new appends it with
/// ``appendNew(_:)``, which skips the set while nothing asked about membership (a large import
/// hashes each model once, into the registry, not twice).
struct OrderedModels {
    private(set) var models: [any PersistentModel] = []
    /// Every model of ``models``, or `nil` until a membership question needs it.
    private var members: Set<ObjectIdentifier>?

    var isEmpty: Bool { models.isEmpty }
    var count: Int { models.count }

    mutating func append(_ model: any PersistentModel) {
        buildMembersIfNeeded()
        if members!.insert(ObjectIdentifier(model)).inserted { models.append(model) }
    }

    /// Appends a model the caller knows is not in the list.
    mutating func appendNew(_ model: any PersistentModel) {
        members?.insert(ObjectIdentifier(model))
        models.append(model)
    }

    mutating func remove(_ model: any PersistentModel) {
        buildMembersIfNeeded()
        if members!.remove(ObjectIdentifier(model)) != nil {
            models.removeAll { $0 === model }
        }
    }

    /// Whether the list has the model; a walk of the list while the set is not built (only
    /// ``appendNew(_:)`` filled it).
    func contains(_ model: any PersistentModel) -> Bool {
        members?.contains(ObjectIdentifier(model)) ?? models.contains { $0 === model }
    }

    mutating func removeAll() {
        models.removeAll()
        members = nil
    }

    /// Builds the membership set from ``models`` if no one needed it yet.
    private mutating func buildMembersIfNeeded() {
        if members == nil { members = Set(models.lazy.map { ObjectIdentifier($0) }) }
    }
}
