import Foundation

/// A URL scheme an adapter registers, such as `json:`: what its URLs look like and how to turn
/// one into a store configuration.
///
/// ```swift
/// StoreRegistry.shared.register(StoreScheme(
///     "files", summary: "one JSON file per entity", location: .required("DIR"), example: "files:data"
/// ) { url in
///     EntityFilesConfiguration(directory: url.fileURL)
/// })
/// ```
///
/// The registry checks a URL against the scheme's ``location`` rule and ``options`` before it
/// calls ``makeConfiguration``, so the factory sees only well-formed URLs.
public struct StoreScheme: Sendable {
    /// The scheme's name, in lowercase, without the colon (`"json"`).
    public let name: String
    /// What the scheme stores, in a few words, shown in errors and help (`"one JSON file"`).
    public let summary: String
    /// Whether URLs of this scheme take a location after the colon.
    public let location: Location
    /// The options URLs of this scheme may give after `?`.
    public let options: [Option]
    /// A complete URL of this scheme, shown in errors (`"json:trips.json"`).
    public let example: String
    /// Creates the configuration a URL names. It may throw ``DataStoreError`` for problems only
    /// it can see; the registry has already checked the location and the options.
    public let makeConfiguration: @Sendable (StoreURL) throws -> any DataStoreConfiguration
    /// Reads the schema a store of this scheme was last written with, without the app's model
    /// types; `nil` for schemes that keep none (such as `memory:`). Set it with
    /// ``readingStoredSchema(_:)``.
    ///
    /// Tools such as `modelstore` pass the result to `Schema(_:)` to open a store they have no
    /// model types for. The reader MUST NOT create or change anything, and MUST throw
    /// ``DataStoreError/Code/notFound`` when there is no store at the URL.
    public private(set) var readStoredSchema: (@Sendable (StoreURL) throws -> Schema.Description)?

    /// Whether a scheme takes a location, and what to call it in usage text.
    public enum Location: Sendable, Hashable {
        /// The URL is the scheme alone (`memory:`).
        case none
        /// A location may follow the colon; the placeholder names it in usage text (`"NAME"`).
        case optional(String)
        /// A location must follow the colon; the placeholder names it in usage text (`"PATH"`).
        case required(String)
    }

    /// An option a scheme takes as `?NAME=VALUE`.
    public struct Option: Sendable, Hashable {
        /// The option's name.
        public let name: String
        /// The values the option accepts; empty when any value is accepted.
        public let allowedValues: [String]
        /// What the option does, in a few words.
        public let summary: String
        /// Whether ``StoreScheme/usage`` leaves the option out (off by default): for options many
        /// schemes share, such as file modes and keys, which tools describe once instead.
        public var isOmittedFromUsage = false

        /// An option, accepting only `allowedValues` unless that is empty.
        public init(_ name: String, allowedValues: [String] = [], summary: String) {
            self.name = name
            self.allowedValues = allowedValues
            self.summary = summary
        }
    }

    /// A scheme.
    ///
    /// - Parameters:
    ///   - name: The scheme without the colon; case-insensitive.
    ///   - summary: What the scheme stores, in a few words.
    ///   - location: Whether a location follows the colon.
    ///   - options: The options URLs may give.
    ///   - example: A complete URL of this scheme.
    ///   - makeConfiguration: Creates the configuration a checked URL names.
    public init(
        _ name: String, summary: String, location: Location, options: [Option] = [], example: String,
        makeConfiguration: @escaping @Sendable (StoreURL) throws -> any DataStoreConfiguration
    ) {
        self.name = name.lowercased()
        self.summary = summary
        self.location = location
        self.options = options
        self.example = example
        self.makeConfiguration = makeConfiguration
    }

    /// The same scheme, with a reader of the schema its stores record (see ``readStoredSchema``).
    ///
    /// ```swift
    /// StoreScheme("files", summary: "one JSON file per entity", location: .required("DIR"), example: "files:data") {
    ///     PerEntityFileStoreConfiguration(directory: $0.fileURL)
    /// }
    /// .readingStoredSchema { try PerEntityFileStore.storedSchema(at: $0.fileURL) }
    /// ```
    public func readingStoredSchema(
        _ read: @escaping @Sendable (StoreURL) throws -> Schema.Description
    ) -> StoreScheme {
        var scheme = self
        scheme.readStoredSchema = read
        return scheme
    }

    /// The form of the scheme's URLs, such as `log:DIR[?durability=none|batched|everySave]`.
    public var usage: String {
        var text = name + ":"
        switch location {
        case .none: break
        case .optional(let placeholder): text += "[\(placeholder)]"
        case .required(let placeholder): text += placeholder
        }
        let listed = options.filter { !$0.isOmittedFromUsage }
        if !listed.isEmpty {
            let items = listed.map { option in
                let values = option.allowedValues.isEmpty ? "VALUE" : option.allowedValues.joined(separator: "|")
                return option.name + "=" + values
            }
            text += "[?" + items.joined(separator: "&") + "]"
        }
        return text
    }

    /// Checks a parsed URL against the location rule and the options; throws
    /// ``DataStoreError/Code/invalidConfiguration`` naming the URL and what was expected.
    func check(_ url: StoreURL) throws {
        switch location {
        case .none where !url.location.isEmpty:
            throw DataStoreError(
                .invalidConfiguration, "the store URL '\(url)' has a location, but '\(name):' takes none",
                remedy: "Write '\(usage)', for example '\(example)'")
        case .required(let placeholder) where url.location.isEmpty:
            throw DataStoreError(
                .invalidConfiguration, "the store URL '\(url)' needs a \(placeholder) after '\(name):'",
                remedy: "Write '\(usage)', for example '\(example)'")
        default:
            break
        }
        for given in url.options {
            guard let option = options.first(where: { $0.name == given.name }) else {
                let accepted =
                    options.isEmpty
                    ? "'\(name):' takes no options"
                    : "'\(name):' takes " + options.map { "'\($0.name)' (\($0.summary))" }.joined(separator: ", ")
                throw DataStoreError(
                    .invalidConfiguration, "the store URL '\(url)' has the unknown option '\(given.name)'",
                    remedy: "Remove it; \(accepted)")
            }
            if !option.allowedValues.isEmpty && !option.allowedValues.contains(given.value) {
                throw DataStoreError(
                    .invalidConfiguration,
                    "the store URL '\(url)' sets the option '\(given.name)' to '\(given.value)', "
                        + "which it does not accept",
                    remedy: "Use one of: " + option.allowedValues.map { "'\($0)'" }.joined(separator: ", "))
            }
        }
    }
}
