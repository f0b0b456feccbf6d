import Foundation

/// What to fetch: a predicate, a sort, a window, and what to load with it. SwiftData's `FetchDescriptor`.
///
/// ```swift
/// var descriptor = FetchDescriptor<Trip>(
///     predicate: #Predicate { $0.name.contains("Rome") },
///     sortBy: [SortDescriptor(\.start)]
/// )
/// descriptor.fetchLimit = 10
/// let trips = try context.fetch(descriptor)
/// ```
public struct FetchDescriptor<T: PersistentModel>: Sendable {
    /// The condition models must meet; `nil` fetches every model of the type.
    public var predicate: Predicate<T>?
    /// The order of the results. Ties are broken by identifier, so every store returns the same order.
    public var sortBy: [SortDescriptor<T>]
    /// The most models to return; `nil` returns all.
    public var fetchLimit: Int?
    /// How many matching models to skip first.
    public var fetchOffset: Int?
    /// Whether models inserted, changed or deleted in the context but not saved count (the default).
    public var includePendingChanges: Bool
    /// The attributes the caller needs, as in SwiftData; empty (the default) fetches every one.
    ///
    /// When the store runs the whole fetch (predicate, sort and window) and the context has no
    /// pending changes of the entity, the store is asked for only these attributes. A store that
    /// reads less (SQLite decodes only these columns and reads no other external file) leaves the
    /// models' other attributes unloaded: the first read or write of any of them, a relationship
    /// change or a delete loads them all from the store at once, as a Core Data fault does.
    /// Relationships are always fetched. A store that reads whole rows anyway (the in-memory, JSON
    /// file and append-log stores) returns complete models.
    public var propertiesToFetch: [any PartialKeyPath<T> & Sendable]
    /// Relationships to load with the results instead of on first access.
    public var relationshipKeyPathsForPrefetching: [any PartialKeyPath<T> & Sendable]

    /// A descriptor with a predicate and sort.
    public init(predicate: Predicate<T>? = nil, sortBy: [SortDescriptor<T>] = []) {
        self.predicate = predicate
        self.sortBy = sortBy
        self.fetchLimit = nil
        self.fetchOffset = nil
        self.includePendingChanges = true
        self.propertiesToFetch = []
        self.relationshipKeyPathsForPrefetching = []
    }
}
