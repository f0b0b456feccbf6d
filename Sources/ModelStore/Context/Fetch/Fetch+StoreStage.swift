import Foundation

// Fetch, step 2: the store runs what the plan gives it, through the store's channel.
extension ModelContext {
    /// What a fetch read from the store, with the attributes a store may have left out.
    struct StoreStageOutput {
        /// The snapshots, of the fetched entity only.
        var snapshots: [DefaultSnapshot]
        /// Whether the store left out the attributes the query's `propertiesToFetch` does not name.
        var omitsUnrequested: Bool
        /// The slots of the attributes the query asked the store to leave out, if it asked.
        var unfetchedSlots: [Int]?
    }

    /// A count or a list of identifiers a store gave for a whole query.
    struct StoreAnswer {
        /// The count.
        var count: Int
        /// The identifiers, in order, when they were asked for.
        var identifiers: [PersistentIdentifier]
    }

    /// The count or the identifiers straight from the store, when it runs the whole query; `nil`
    /// when it does not, or asks for work in memory (the later steps then do that work).
    @inline(__always)
    func storeAnswer<T: PersistentModel>(
        _ descriptor: FetchDescriptor<T>, plan: FetchPlan<T>, channel: StoreChannel, countOnly: Bool
    ) throws -> StoreAnswer? {
        guard plan.storeDoesEverything else { return nil }
        let request = plan.request(descriptor, editingState: editingState)
        if countOnly {
            return try channel.count(request).map { StoreAnswer(count: $0, identifiers: []) }
        }
        return try channel.identifiers(request).map { StoreAnswer(count: $0.count, identifiers: $0) }
    }

    /// The snapshots the store returns for the plan (which records what a SwiftData-style store
    /// left for the context). With `narrows`, a store that runs the whole query reads only the
    /// attributes ``FetchDescriptor/propertiesToFetch`` names: nothing after it reads the others.
    @inline(__always)
    func storeStage<T: PersistentModel>(
        _ descriptor: FetchDescriptor<T>, plan: inout FetchPlan<T>, entity: Schema.Entity, channel: StoreChannel,
        narrows: Bool
    ) throws -> StoreStageOutput {
        let unfetched =
            narrows && plan.storeDoesEverything && plan.query != nil
            ? Self.unfetchedSlots(descriptor.propertiesToFetch, entity: entity) : nil
        if let unfetched {
            plan.query?.propertiesToFetch = entity.attributes.filter { !unfetched.contains($0.slot) }.map(\.name)
        }
        let fetched = try channel.fetch(descriptor, plan: &plan, editingState: editingState)
        for snapshot in fetched.snapshots where snapshot.entity.name != entity.name {
            throw DataStoreError(
                .corrupted, "the store returned a '\(snapshot.entity.name)' snapshot for a fetch of '\(entity.name)'",
                remedy: "Fix the adapter: fetch must return only snapshots of the requested entity",
                entityName: entity.name)
        }
        return StoreStageOutput(
            snapshots: fetched.snapshots, omitsUnrequested: fetched.omitsUnrequested, unfetchedSlots: unfetched)
    }

    /// The slots of the attributes `propertiesToFetch` leaves out, or `nil` when it leaves none out
    /// (it is empty, or names every attribute). Relationships are always fetched.
    static func unfetchedSlots<T>(
        _ propertiesToFetch: [any PartialKeyPath<T> & Sendable], entity: Schema.Entity
    ) -> [Int]? {
        // A hierarchy's models load whole: the class of each decides which slots are its own.
        guard propertiesToFetch.count != 0, entity.classAttribute == nil else { return nil }
        let named = Set(propertiesToFetch.compactMap { entity.propertyName(for: $0) })
        let slots = entity.attributes.filter { !named.contains($0.name) }.map(\.slot)
        return slots.isEmpty ? nil : slots
    }
}
