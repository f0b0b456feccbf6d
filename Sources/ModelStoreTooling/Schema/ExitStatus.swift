import ModelStore

/// The exit statuses of `modelstore`, as `modelstore --help` documents them.
package enum ExitStatus: Int32, CaseIterable {
    /// The command did what was asked (for `verify`: the store is healthy).
    case success = 0
    /// The store is damaged: `verify` found corruption, or another command met damaged data.
    case damaged = 1
    /// The command line is wrong: an unknown command or option, or a missing or extra argument.
    case usage = 2
    /// The store URL is malformed or names an unregistered scheme, or the command does not apply
    /// to the store's scheme (such as `compact` on a JSON file).
    case unsupported = 3
    /// There is no store at the path the URL names.
    case notFound = 4
    /// Another process (or store) holds the store's lock.
    case locked = 5
    /// The destination of `convert` already holds models.
    case destinationNotEmpty = 6
    /// Anything else: an I/O error, a schema the tool cannot use, a failed save.
    case failure = 7

    /// What the status means, for `--help`.
    package var meaning: String {
        switch self {
        case .success: "success (for verify: the store is healthy)"
        case .damaged: "the store is damaged (verify found corruption, or damaged data stopped the command)"
        case .usage: "bad command line: unknown command or option, missing or extra argument"
        case .unsupported: "bad store URL, or a command that does not apply to the store's scheme"
        case .notFound: "no store at the given path"
        case .locked: "the store is locked by another process"
        case .destinationNotEmpty: "the destination of convert already holds models"
        case .failure: "any other failure (I/O, schema, save)"
        }
    }

    /// The status for a store error, by its code.
    package init(_ code: DataStoreError.Code) {
        switch code {
        case .corrupted: self = .damaged
        case .invalidConfiguration, .unsupportedFeature: self = .unsupported
        case .notFound: self = .notFound
        case .locked: self = .locked
        default: self = .failure
        }
    }
}
