import ModelStore

/// Why the studio could not do what a request or its command line asked: what failed, on what,
/// and how to fix it.
public struct StudioError: Error, CustomStringConvertible, Sendable {
    /// The kinds of failure, which decide a response's status.
    public enum Kind: Sendable, Hashable {
        /// The request names something the store does not have (an entity, a model, a property).
        case notFound
        /// The request is malformed (a bad filter, a value of the wrong type, a bad cursor).
        case badRequest
        /// The studio runs read-only, or the store cannot do what was asked.
        case forbidden
        /// The store refused a write because someone changed the model meanwhile.
        case conflict
        /// The store could not be opened or read.
        case store
    }

    /// The kind of failure.
    public let kind: Kind
    /// What failed, quoting names and values in single quotes.
    public let message: String
    /// How to fix it.
    public let remedy: String?

    /// A failure of a kind, with a message and a remedy.
    public init(_ kind: Kind, _ message: String, remedy: String? = nil) {
        self.kind = kind
        self.message = message
        self.remedy = remedy
    }

    /// The message, then the remedy.
    public var description: String {
        remedy.map { "\(message). \($0)" } ?? message
    }

    /// A store's error as a studio error: a conflict stays a conflict, as does a value another model
    /// already holds under a uniqueness constraint; anything else is the store's failure.
    static func from(_ error: any Error) -> StudioError {
        if let error = error as? StudioError { return error }
        if let error = error as? DataStoreError {
            switch error.code {
            case .conflict, .uniqueConstraintViolation: return StudioError(.conflict, String(describing: error))
            case .notFound: return StudioError(.notFound, String(describing: error))
            default: return StudioError(.store, String(describing: error))
            }
        }
        return StudioError(.store, String(describing: error))
    }
}
