/// A SQL text that runs on every save or read of a row, found in a connection's statement cache by
/// the identity of this object instead of by its text.
///
/// A connection's `statement(_:)` over a `String` hashes the whole text on every call (a few thousand
/// instructions of a one-model save, over its four statements); over a `CachedSQL` it hashes one
/// pointer. Make one per text, once (a static constant, or a property of an
/// ``EntityLayout``), and keep it: the cache holds the object, so its identity is never reused for
/// another text while the statement is cached.
final class CachedSQL: Sendable {
    /// The statement's text.
    let text: String

    /// A cache key for `text`.
    init(_ text: String) { self.text = text }
}
