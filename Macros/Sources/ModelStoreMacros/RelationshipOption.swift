import ModelStore

extension Schema.Relationship {
    /// An option of `@Relationship`, in SwiftData's spelling: `@Relationship(.unique) var badge: Badge?`.
    public struct Option: Sendable, Hashable {
        private let name: String

        /// No two models relate to the same model through the relationship, as a `#Unique` of it
        /// says; only a to-one relationship can be unique.
        public static let unique = Option(name: "unique")
    }
}
