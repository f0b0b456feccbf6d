import Foundation
import ModelStore

/// Why a sync round stopped: a code to match, a message that says what failed and on what, and
/// what to do about it.
public struct SyncError: Error, Sendable, CustomStringConvertible {
    /// What kind of failure this is.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        /// The code's name.
        public let name: String
        /// A code.
        public init(_ name: String) { self.name = name }
        /// The code's name.
        public var description: String { name }

        /// The two replicas' schemas differ; the message says which side is behind.
        public static let schemaMismatch = Code("schemaMismatch")
        /// The local container's schema lacks the sync engine's entities.
        public static let missingMetadata = Code("missingMetadata")
        /// The remote could not be reached or did not answer; the engine retries.
        public static let unreachable = Code("unreachable")
        /// The remote refused the request (bad input, authorization, size).
        public static let refused = Code("refused")
        /// A store failed while reading or applying changes; the underlying error says how.
        public static let store = Code("store")
        /// Pushes kept meeting newer remote changes; the engine retries.
        public static let busy = Code("busy")
        /// The remote now serves another store than the one the replica's hello found (its
        /// address was pointed elsewhere); the engine says hello again and retries.
        public static let remoteChanged = Code("remoteChanged")
    }

    /// What kind of failure.
    public var code: Code
    /// What failed, on what.
    public var message: String
    /// What to do about it.
    public var remedy: String?
    /// Whether a later round may succeed without anyone changing anything.
    public var isTransient: Bool
    /// The error underneath, if any.
    public var underlyingError: (any Error & Sendable)?

    /// An error.
    public init(
        _ code: Code, _ message: String, remedy: String? = nil, isTransient: Bool = false,
        underlyingError: (any Error & Sendable)? = nil
    ) {
        self.code = code
        self.message = message
        self.remedy = remedy
        self.isTransient = isTransient
        self.underlyingError = underlyingError
    }

    /// `code: message. remedy`.
    public var description: String {
        "\(code): \(message)" + (remedy.map { ". \($0)" } ?? "")
            + (underlyingError.map { " (\($0))" } ?? "")
    }

    /// Wraps a store's failure; conflicts and locks are transient (another writer got there first).
    static func store(_ error: any Error, while action: String) -> SyncError {
        if let error = error as? SyncError { return error }
        let transient =
            (error as? DataStoreError).map { $0.code == .conflict || $0.code == .locked || $0.code == .io } ?? false
        return SyncError(
            .store, "\(action) failed", remedy: transient ? "The engine retries" : nil, isTransient: transient,
            underlyingError: error)
    }
}

extension SyncError.Code {
    /// Matches a ``SyncError`` with this code: `catch SyncError.Code.schemaMismatch`.
    public static func ~= (pattern: SyncError.Code, error: any Error) -> Bool {
        (error as? SyncError)?.code == pattern
    }
}
