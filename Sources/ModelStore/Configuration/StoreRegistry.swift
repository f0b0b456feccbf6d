import Foundation

/// The URL schemes the app knows, and the conversion of store URLs into configurations.
///
/// Adapters register a ``StoreScheme`` each; the app then names its store by a string and can
/// switch backend without code changes:
///
/// ```swift
/// let configuration = try StoreRegistry.shared.configuration(for: "log:data?durability=everySave")
/// ```
///
/// `ModelStoreAdapters` registers the built-in schemes (`memory:`, `json:`, `log:`) in ``shared``.
/// Where the app asks for it, an environment variable (``environmentVariable``, `MODELSTORE_URL`,
/// or one the app names) overrides the URL the code gives, so the same binary runs on another
/// backend; a URL opened without naming a variable is opened as given.
///
/// A registry is thread-safe: register and resolve from any thread.
public final class StoreRegistry: Sendable {
    /// The registry the app shares, where adapters register their schemes.
    public static let shared = StoreRegistry()

    /// The environment variable apps name for their default store, `MODELSTORE_URL`: pass it as
    /// the override of the container whose store a user may swap, such as the app's main one.
    public static let environmentVariable = "MODELSTORE_URL"

    private let schemesByName: LockedValue<[String: StoreScheme]>
    private let defaultURL: LockedValue<String?>

    /// An empty registry, for tests and for apps that keep their own.
    public init() {
        schemesByName = LockedValue([:])
        defaultURL = LockedValue(nil)
    }

    /// The URL of the store `ModelContainer(for:)` opens when it is given no configuration, as
    /// SwiftData opens its default store; ``environmentVariable`` (`MODELSTORE_URL`) overrides it.
    ///
    /// `nil` in an empty registry. Linking `ModelStoreAdapters` sets it in ``shared`` when the
    /// program starts, unless the app set it first: an SQLite database `default.store` in the
    /// platform's application-support folder (`$XDG_DATA_HOME/<executable>`, else
    /// `~/.local/share/<executable>`, on Linux).
    public var defaultStoreURL: String? {
        get { defaultURL.withLock { $0 } }
        set { defaultURL.withLock { $0 = newValue } }
    }

    /// The configuration of the default store: `MODELSTORE_URL` when set, else ``defaultStoreURL``.
    ///
    /// Throws ``DataStoreError/Code/invalidConfiguration`` when neither is set, saying how to set one.
    public func defaultConfiguration() throws -> any DataStoreConfiguration {
        let environment = ProcessInfo.processInfo.environment[Self.environmentVariable]
        guard let url = (environment?.isEmpty == false ? environment : nil) ?? defaultStoreURL else {
            throw DataStoreError(
                .invalidConfiguration, "a container was given no configuration and there is no default store",
                remedy:
                    "Link ModelStoreAdapters (it sets StoreRegistry.shared.defaultStoreURL), set MODELSTORE_URL, "
                    + "or pass a configuration such as 'configurations: .inMemory()'")
        }
        return try configuration(for: url, overriddenBy: Self.environmentVariable)
    }

    /// Registers a scheme.
    ///
    /// - Parameters:
    ///   - scheme: The scheme to register.
    ///   - replacingExisting: Whether to replace a scheme of the same name that is already
    ///     registered (the default). Pass `false` to keep an app's own choice.
    /// - Returns: Whether the scheme was registered.
    @discardableResult
    public func register(_ scheme: StoreScheme, replacingExisting: Bool = true) -> Bool {
        schemesByName.withLock { schemes in
            guard replacingExisting || schemes[scheme.name] == nil else { return false }
            schemes[scheme.name] = scheme
            return true
        }
    }

    /// Removes a scheme; returns whether it was registered.
    @discardableResult
    public func unregister(_ name: String) -> Bool {
        schemesByName.withLock { $0.removeValue(forKey: name.lowercased()) != nil }
    }

    /// The scheme with this name (case-insensitive), if registered.
    public func scheme(named name: String) -> StoreScheme? {
        schemesByName.withLock { $0[name.lowercased()] }
    }

    /// Every registered scheme, by name.
    public var schemes: [StoreScheme] {
        schemesByName.withLock { Array($0.values) }.sorted { $0.name < $1.name }
    }

    /// Parses a store URL and checks it against its registered scheme.
    ///
    /// Throws ``DataStoreError/Code/invalidConfiguration`` naming the string, saying what was
    /// expected and, for an unknown scheme, listing the registered ones.
    public func url(_ string: String) throws -> StoreURL {
        let url: StoreURL
        do {
            url = try StoreURL(string)
        } catch var error as DataStoreError {
            error.remedy = [error.remedy, registeredSchemesSentence].compactMap { $0 }.joined(separator: ". ")
            throw error
        }
        guard let scheme = scheme(named: url.scheme) else {
            throw DataStoreError(
                .invalidConfiguration,
                "the store URL '\(StoreURL.redactingPassword(in: string))' uses the scheme '\(url.scheme):', which is not registered",
                remedy: registeredSchemesSentence
                    + ". An adapter of your own registers its scheme with StoreRegistry.shared.register(_:)")
        }
        try scheme.check(url)
        return url
    }

    /// The configuration a store URL names.
    ///
    /// Throws ``DataStoreError/Code/invalidConfiguration`` for a string that does not parse, names
    /// an unregistered scheme, or does not fit its scheme; and whatever the scheme's factory throws.
    public func configuration(for string: String) throws -> any DataStoreConfiguration {
        let url = try url(string)
        guard let scheme = scheme(named: url.scheme) else {
            throw DataStoreError(
                .invalidConfiguration,
                "the scheme '\(url.scheme):' of '\(StoreURL.redactingPassword(in: string))' was unregistered while in use",
                remedy: "Register it again")
        }
        return try scheme.makeConfiguration(url)
    }

    /// The configuration for `string`, or for the URL in the environment variable `variable` when
    /// one is named and the environment sets it.
    ///
    /// - Parameters:
    ///   - string: The store URL the code gives.
    ///   - variable: The environment variable that may override it, such as
    ///     ``environmentVariable``; `nil` to open `string` whatever the environment says.
    ///   - environment: The environment to read (the process's by default).
    /// An error about the environment's URL says that it came from the environment variable.
    public func configuration(
        for string: String, overriddenBy variable: String?,
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws -> any DataStoreConfiguration {
        let resolved = Self.resolve(string, overriddenBy: variable, environment: environment)
        do {
            return try configuration(for: resolved.url)
        } catch var error as DataStoreError where resolved.isFromEnvironment {
            error.message += " (set by the environment variable '\(variable ?? "")')"
            throw error
        }
    }

    /// The URL a store opens: the value of the environment variable `variable` when one is named
    /// and it is set and not blank, otherwise `string`.
    public static func resolve(
        _ string: String, overriddenBy variable: String? = environmentVariable,
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) -> (url: String, isFromEnvironment: Bool) {
        if let variable, let override = environment[variable],
            !override.trimmingCharacters(in: .whitespaces).isEmpty
        {
            return (override, true)
        }
        return (string, false)
    }

    /// "Registered schemes: 'memory:[NAME]' (…), …", or a hint to register some.
    private var registeredSchemesSentence: String {
        let schemes = self.schemes
        guard !schemes.isEmpty else {
            return "No schemes are registered: import ModelStoreAdapters and use ModelContainer(for:url:), "
                + "or call StoreRegistry.shared.registerBuiltInSchemes()"
        }
        return "Registered schemes: " + schemes.map { "'\($0.usage)' (\($0.summary))" }.joined(separator: ", ")
    }
}
