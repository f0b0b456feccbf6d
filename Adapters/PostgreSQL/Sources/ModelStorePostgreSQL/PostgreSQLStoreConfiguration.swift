import Foundation
import ModelStore

/// The settings of a ``PostgreSQLStore``: which server and database, as which role, in which
/// PostgreSQL schema (namespace), and how long statements may run.
///
/// Credentials come from the URL or from the standard `PG*` environment variables (`PGHOST`,
/// `PGPORT`, `PGUSER`, `PGPASSWORD`, `PGDATABASE`). The password is never part of a description,
/// an error or a log line: ``description`` and ``redactedURL`` leave it out.
public struct PostgreSQLStoreConfiguration: DataStoreConfiguration, CustomStringConvertible,
    CustomDebugStringConvertible, CustomReflectable
{
    /// The store type.
    public typealias Store = PostgreSQLStore

    /// How the connection uses TLS.
    public enum TLSMode: String, Sendable, Hashable, CaseIterable {
        /// Plain TCP (and always for a unix socket).
        case disable
        /// TLS when the server offers it, plain TCP otherwise.
        case prefer
        /// TLS or no connection. The server's certificate is verified, and its name or address
        /// checked, against the system's trusted roots, or against ``tlsRootCertificatePath``.
        case require
    }

    /// The configuration's name, unique within a container.
    public var name: String
    /// The schema; the container injects it.
    public var schema: Schema?
    /// The server's host name or address; ignored when ``unixSocketPath`` is set.
    public var host: String
    /// The server's port.
    public var port: Int
    /// The path of the server's unix socket (`DIR/.s.PGSQL.PORT`), or `nil` for TCP.
    public var unixSocketPath: String?
    /// The role to connect as.
    public var username: String
    /// The database to connect to.
    public var database: String
    /// The PostgreSQL schema the store's tables live in; created if missing. Several stores can
    /// share one database in different namespaces.
    public var namespace: String
    /// How the connection uses TLS.
    public var tls: TLSMode
    /// A PEM file of the certificates that TLS trusts to sign the server's certificate (the URL's
    /// `sslrootcert`), instead of the system's roots: for a server with a private or self-signed
    /// certificate.
    public var tlsRootCertificatePath: String?
    /// The most connections the store opens. From 2 on, one of them (the first) stays open for the
    /// store's life, outside the pool, and every call runs on it while no other call uses it; the
    /// others are a pool for the calls made meanwhile, and close after a minute unused. With 1, that
    /// one connection is the pool's, and stays open.
    public var maximumConnections: Int
    /// How long opening a connection may take.
    public var connectTimeout: Duration
    /// How long one statement may run before the server cancels it (`statement_timeout`); `nil`
    /// for the server's setting.
    public var statementTimeout: Duration?
    /// How many times a save that failed with a serialization failure or a deadlock is run again
    /// before the error is reported.
    public var serializationRetries: Int
    /// How many changes of history the store keeps at most (10,000 by default), counted over all
    /// transactions: past it, the oldest transactions go (down to nine tenths of the limit, so
    /// that trimming is rare) and tokens into them expire. `nil` keeps every transaction.
    public var historyLimit: Int? = 10_000
    /// Whether saves that arrive while another save of the store is being committed are committed
    /// together, in one transaction (the URL's `group_commit=on`; off by default). See
    /// ``PostgreSQLStore/groupsCommits``, which starts as this and can be changed while the store is open.
    public var groupCommit = false
    /// How full, in percent, PostgreSQL packs the pages of the entity tables the store creates (their
    /// `fillfactor`; the URL's `fillfactor`): 90 by default, from 10 to 100.
    ///
    /// The room left on a page lets an update write the row's new version on the same page, which
    /// adds no entry to the table's indexes when no indexed column changed (a heap-only tuple
    /// update); 100, PostgreSQL's own default, leaves no room, so an update of a row in a table filled
    /// by inserts writes an entry in every index. It applies to tables when they are created (a new
    /// store, or an entity a migration adds); an existing table keeps its own, which
    /// `ALTER TABLE … SET (fillfactor = …)` changes for the pages written after it.
    public var fillFactor = 90
    /// The password; never shown.
    var password: String?

    /// A configuration for a server over TCP.
    public init(
        name: String = "postgres", host: String = "127.0.0.1", port: Int = 5432, username: String,
        password: String? = nil, database: String, namespace: String = "public", tls: TLSMode = .disable,
        maximumConnections: Int = 8, connectTimeout: Duration = .seconds(10), statementTimeout: Duration? = nil,
        serializationRetries: Int = 3, schema: Schema? = nil
    ) {
        self.name = name
        self.host = host
        self.port = port
        self.username = username
        self.password = password
        self.database = database
        self.namespace = namespace
        self.tls = tls
        self.maximumConnections = maximumConnections
        self.connectTimeout = connectTimeout
        self.statementTimeout = statementTimeout
        self.serializationRetries = serializationRetries
        self.schema = schema
    }

    /// `postgres://user@host:port/database?namespace=…`: where the store is, without the password.
    public var redactedURL: String {
        var text = "postgres://\(username)@"
        if let unixSocketPath {
            text += unixSocketPath.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? unixSocketPath
        } else {
            text += "\(host):\(port)"
        }
        text += "/\(database)"
        if namespace != "public" { text += "?namespace=\(namespace)" }
        return text
    }

    /// Two configurations are equal when they name the same store with the same settings (the
    /// schema is the container's, and not compared).
    public static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.name == rhs.name && lhs.redactedURL == rhs.redactedURL && lhs.password == rhs.password
            && lhs.tls == rhs.tls && lhs.tlsRootCertificatePath == rhs.tlsRootCertificatePath
            && lhs.maximumConnections == rhs.maximumConnections
            && lhs.connectTimeout == rhs.connectTimeout && lhs.statementTimeout == rhs.statementTimeout
            && lhs.serializationRetries == rhs.serializationRetries && lhs.historyLimit == rhs.historyLimit
            && lhs.groupCommit == rhs.groupCommit && lhs.fillFactor == rhs.fillFactor
    }

    /// Hashes the name and where the store is.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(name)
        hasher.combine(redactedURL)
    }

    /// The redacted URL.
    public var description: String { redactedURL }
    /// The redacted URL.
    public var debugDescription: String { "PostgreSQLStoreConfiguration(\(redactedURL))" }
    /// A mirror without the password, so `dump` and `String(reflecting:)` cannot show it.
    public var customMirror: Mirror {
        Mirror(self, children: ["name": name, "url": redactedURL], displayStyle: .struct)
    }

    /// Checks the port, the pool size, the names, the timeouts, the history limit and the fill factor.
    public func validate() throws {
        func invalid(_ what: String, _ remedy: String) -> DataStoreError {
            DataStoreError(
                .invalidConfiguration, "the PostgreSQL store '\(redactedURL)' has \(what)", remedy: remedy)
        }
        guard (1...65535).contains(port) else { throw invalid("the port '\(port)'", "Use a port from 1 to 65535") }
        guard maximumConnections >= 1 else {
            throw invalid("'\(maximumConnections)' connections at most", "Allow at least one connection")
        }
        guard !username.isEmpty else { throw invalid("no user", "Name a role in the URL or in PGUSER") }
        guard !database.isEmpty else { throw invalid("no database", "Name a database in the URL or in PGDATABASE") }
        guard !namespace.isEmpty, namespace.utf8.count <= 63 else {
            throw invalid("the namespace '\(namespace)'", "Use a name of 1 to 63 bytes")
        }
        if let statementTimeout, statementTimeout <= .zero {
            throw invalid("a statement timeout of '\(statementTimeout)'", "Use a positive duration, or nil")
        }
        if let historyLimit, historyLimit < 1 {
            throw invalid("a history limit of \(historyLimit) changes", "Keep at least one change, or use nil for all")
        }
        guard (10...100).contains(fillFactor) else {
            throw invalid("a fill factor of \(fillFactor)%", "Use a percentage from 10 to 100 (90 by default)")
        }
    }
}

extension PostgreSQLStoreConfiguration {
    /// A configuration from a store URL and, for what the URL leaves out, the `PG*` variables.
    ///
    /// Accepted forms: `postgres://[user[:password]@][host][:port][/database][?options]` (also
    /// `postgresql://`), and a unix socket as the host, percent-encoded
    /// (`postgres://user@%2Ftmp%2Fpg/db`), or as the option `host=/tmp/pg`. Options: `namespace`,
    /// `sslmode` (`disable`, `prefer`, `require`), `sslrootcert` (a PEM file of trusted roots),
    /// `statement_timeout` (milliseconds),
    /// `max_connections`, `group_commit` (`on` or `off`, see ``groupCommit``), `fillfactor` (a
    /// percentage, see ``fillFactor``). Throws ``DataStoreError/Code/invalidConfiguration`` for
    /// anything else; the message never contains the password.
    public init(
        url string: String, name: String = "postgres",
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws {
        let scheme = string.prefix { $0 != ":" }.lowercased()
        guard scheme == "postgres" || scheme == "postgresql",
            let components = URLComponents(string: string)
        else {
            throw DataStoreError(
                .invalidConfiguration, "a PostgreSQL store URL must start with 'postgres://' or 'postgresql://'",
                remedy: "Write postgres://USER@HOST:PORT/DATABASE")
        }
        var options: [String: String] = [:]
        for item in components.queryItems ?? [] { options[item.name] = item.value ?? "" }
        let known: Set = [
            "namespace", "sslmode", "sslrootcert", "statement_timeout", "max_connections", "host", "port",
            "group_commit", "fillfactor",
        ]
        if let unknown = options.keys.sorted().first(where: { !known.contains($0) }) {
            throw DataStoreError(
                .invalidConfiguration, "the PostgreSQL store URL has the unknown option '\(unknown)'",
                remedy: "Use " + known.sorted().map { "'\($0)'" }.joined(separator: ", "))
        }
        let host =
            options["host"] ?? components.percentEncodedHost.flatMap { $0.removingPercentEncoding }
            .flatMap { $0.isEmpty ? nil : $0 } ?? environment["PGHOST"] ?? "127.0.0.1"
        let portText = options["port"] ?? components.port.map(String.init) ?? environment["PGPORT"] ?? "5432"
        guard let port = Int(portText) else {
            throw DataStoreError(
                .invalidConfiguration, "the PostgreSQL port '\(portText)' is not a number",
                remedy: "Write a port number")
        }
        let user = components.user.flatMap { $0.removingPercentEncoding } ?? environment["PGUSER"]
        let password = components.password.flatMap { $0.removingPercentEncoding } ?? environment["PGPASSWORD"]
        let path = components.path.hasPrefix("/") ? String(components.path.dropFirst()) : components.path
        let database = path.removingPercentEncoding.flatMap { $0.isEmpty ? nil : $0 } ?? environment["PGDATABASE"]
        let resolvedUser = user ?? environment["USER"] ?? ""
        self.init(
            name: name, host: host, port: port, username: resolvedUser, password: password,
            database: database ?? resolvedUser, namespace: options["namespace"] ?? "public")
        if host.hasPrefix("/") { unixSocketPath = host + "/.s.PGSQL.\(port)" }
        if let mode = options["sslmode"] {
            guard let tls = TLSMode(rawValue: mode) else {
                throw DataStoreError(
                    .invalidConfiguration, "the PostgreSQL sslmode '\(mode)' is not supported",
                    remedy: "Use 'disable', 'prefer' or 'require'")
            }
            self.tls = tls
        }
        tlsRootCertificatePath = options["sslrootcert"]
        if let text = options["statement_timeout"] {
            guard let milliseconds = Int(text), milliseconds > 0 else {
                throw DataStoreError(
                    .invalidConfiguration, "the statement_timeout '\(text)' is not a positive number of milliseconds",
                    remedy: "Write statement_timeout=5000 for five seconds")
            }
            statementTimeout = .milliseconds(milliseconds)
        }
        if let text = options["max_connections"] {
            guard let count = Int(text), count > 0 else {
                throw DataStoreError(
                    .invalidConfiguration, "the max_connections '\(text)' is not a positive number",
                    remedy: "Write max_connections=8")
            }
            maximumConnections = count
        }
        if let text = options["group_commit"] {
            guard ["on", "off"].contains(text) else {
                throw DataStoreError(
                    .invalidConfiguration,
                    "the PostgreSQL store URL's group_commit '\(text)' is neither 'on' nor 'off'",
                    remedy: "Write group_commit=on to commit concurrent saves together, or group_commit=off")
            }
            groupCommit = text == "on"
        }
        if let text = options["fillfactor"] {
            guard let percent = Int(text), (10...100).contains(percent) else {
                throw DataStoreError(
                    .invalidConfiguration,
                    "the PostgreSQL store URL's fillfactor '\(text)' is not a percentage from 10 to 100",
                    remedy: "Write fillfactor=90 to leave a tenth of each page for updates, or fillfactor=100")
            }
            fillFactor = percent
        }
        try validate()
    }
}

extension DataStoreConfiguration where Self == PostgreSQLStoreConfiguration {
    /// A PostgreSQL store at a `postgres://` URL, with the `PG*` variables for what it leaves out.
    public static func postgreSQL(_ url: String, namespace: String? = nil) throws -> PostgreSQLStoreConfiguration {
        var configuration = try PostgreSQLStoreConfiguration(url: url)
        if let namespace { configuration.namespace = namespace }
        return configuration
    }
}
