import Foundation

/// One step of a fetch, in the order the fetch runs it: the list a plan computes once, which
/// ``ModelContext/fetch(_:)`` executes and ``ModelContext/explain(_:)`` prints.
public enum QueryStage: Sendable, Hashable, CustomStringConvertible {
    /// The store runs its part: the neutral query of a querying store, or the descriptor of a
    /// SwiftData-style store.
    case store
    /// The context filters (conditions the store could not run, or ran inexactly) and sorts the
    /// snapshots the store returned, before any model exists.
    case snapshots(filters: Bool, sorts: Bool)
    /// The context materialises models and works on them: evaluates the whole predicate, merges
    /// its unsaved inserts, changes and deletes, and sorts with the `SortDescriptor`s.
    case models(filters: Bool, mergesPendingChanges: Bool, sorts: Bool)
    /// The context applies offset and limit, on snapshots or on models.
    case window(QueryExplanation.Location)

    /// The stage in a few words, as explanations print it.
    public var description: String {
        switch self {
        case .store: return "store"
        case .snapshots(let filters, let sorts):
            return "snapshots("
                + [filters ? "filter" : nil, sorts ? "sort" : nil].compactMap { $0 }.joined(separator: ", ") + ")"
        case .models(let filters, let merges, let sorts):
            let parts = [filters ? "filter" : nil, merges ? "merge unsaved changes" : nil, sorts ? "sort" : nil]
            return "models(" + parts.compactMap { $0 }.joined(separator: ", ") + ")"
        case .window(let location): return "window(\(location.rawValue))"
        }
    }
}
