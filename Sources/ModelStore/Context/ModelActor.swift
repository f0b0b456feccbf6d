import Foundation

/// An actor that owns a ``ModelContext``, for work off the main actor. SwiftData's `ModelActor`.
///
/// ```swift
/// actor Importer: ModelActor {
///     let modelContainer: ModelContainer
///     let modelContext: ModelContext
///     init(modelContainer: ModelContainer) {
///         self.modelContainer = modelContainer
///         self.modelContext = ModelContext(modelContainer)
///     }
///     func importTrips(_ names: [String]) throws -> [PersistentIdentifier] { … }
/// }
/// ```
///
/// Pass ``PersistentIdentifier``s in and out, never models: the context and its models stay on the actor.
public protocol ModelActor: Actor {
    /// The container the actor's context uses.
    nonisolated var modelContainer: ModelContainer { get }
    /// The actor's own context.
    var modelContext: ModelContext { get }
}

extension ModelActor {
    /// The model with this identifier in the actor's context, or `nil`.
    public subscript<T: PersistentModel>(id: PersistentIdentifier, as type: T.Type) -> T? {
        try? modelContext.model(for: id, as: type)
    }
}
