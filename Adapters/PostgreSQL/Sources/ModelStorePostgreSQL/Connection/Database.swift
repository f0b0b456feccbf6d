import Foundation
import Logging
import ModelStore
import NIOCore
import NIOPosix
import NIOSSL
import PostgresNIO

/// The store's connection pool (PostgresNIO's `PostgresClient`), the task that runs it, and
/// transactions with retries.
final class Database: Sendable {
    let client: PostgresClient
    let url: String
    private let runner: Task<Void, Never>
    private let retries: Int

    init(_ configuration: PostgreSQLStoreConfiguration) {
        var client: PostgresClient.Configuration
        if let socket = configuration.unixSocketPath {
            client = PostgresClient.Configuration(
                unixSocketPath: socket, username: configuration.username, password: configuration.password,
                database: configuration.database)
        } else {
            let tls: PostgresClient.Configuration.TLS =
                switch configuration.tls {
                case .disable: .disable
                case .prefer: .prefer(.makeClientConfiguration())
                case .require: .require(.makeClientConfiguration())
                }
            client = PostgresClient.Configuration(
                host: configuration.host, port: configuration.port, username: configuration.username,
                password: configuration.password, database: configuration.database, tls: tls)
        }
        client.options.maximumConnections = configuration.maximumConnections
        client.options.connectTimeout = configuration.connectTimeout
        client.options.keepAliveBehavior = nil
        if let timeout = configuration.statementTimeout {
            let milliseconds =
                timeout.components.seconds * 1000 + timeout.components.attoseconds / 1_000_000_000_000_000
            client.options.additionalStartupParameters = [("statement_timeout", "\(max(milliseconds, 1))")]
        }
        let pool = PostgresClient(configuration: client, backgroundLogger: Self.silent)
        self.client = pool
        url = configuration.redactedURL
        retries = max(configuration.serializationRetries, 0)
        runner = Task(executorPreference: BridgeExecutor.shared) { await pool.run() }
    }

    deinit { runner.cancel() }

    /// Opens and closes one connection outside the pool, so an unreachable server or refused
    /// credentials fail the open at once with the cause, instead of after the pool's retries.
    static func probe(_ configuration: PostgreSQLStoreConfiguration) async throws {
        var options = PostgresConnection.Configuration.Options()
        options.connectTimeout = TimeAmount.nanoseconds(
            configuration.connectTimeout.components.seconds * 1_000_000_000
                + configuration.connectTimeout.components.attoseconds / 1_000_000_000)
        var connection: PostgresConnection.Configuration
        if let socket = configuration.unixSocketPath {
            connection = PostgresConnection.Configuration(
                unixSocketPath: socket, username: configuration.username, password: configuration.password,
                database: configuration.database)
        } else {
            connection = PostgresConnection.Configuration(
                host: configuration.host, port: configuration.port, username: configuration.username,
                password: configuration.password, database: configuration.database,
                tls: configuration.tls == .disable
                    ? .disable : .prefer(try .init(configuration: .makeClientConfiguration())))
        }
        connection.options = options
        do {
            let opened = try await PostgresConnection.connect(configuration: connection, id: 0, logger: silent)
            try await opened.close()
        } catch {
            throw ModelStoreErrors.translate(error, doing: "connecting", url: configuration.redactedURL)
        }
    }

    /// Stops the pool: every connection closes.
    func close() { runner.cancel() }

    /// A logger that logs nothing: the store never logs connection details or credentials.
    static let silent = Logger(label: "ModelStorePostgreSQL", factory: { _ in SwiftLogNoOpLogHandler() })

    /// Runs `body` synchronously on the bridge (see ``BridgeExecutor``).
    func wait<Value: Sendable>(_ body: @escaping @Sendable () async throws -> Value) throws -> Value {
        try BridgeExecutor.shared.wait(for: body, storeURL: url)
    }

    /// Runs `body` in one transaction, again (up to the configured number of times) after a
    /// serialization failure or a deadlock; errors become `DataStoreError`s saying what failed.
    func transaction<Value: Sendable>(
        _ doing: String, isolation: String = "READ COMMITTED",
        _ body: @escaping @Sendable (Session) async throws -> Value
    ) async throws -> Value {
        var attempt = 0
        while true {
            do {
                return try await client.withConnection { connection in
                    let session = Session(connection: connection)
                    try await session.execute("BEGIN ISOLATION LEVEL \(isolation)")
                    do {
                        let value = try await body(session)
                        try await session.execute("COMMIT")
                        return value
                    } catch {
                        // A connection the server dropped cannot roll back; the server already did.
                        _ = try? await session.execute("ROLLBACK")
                        throw error
                    }
                }
            } catch {
                if ModelStoreErrors.isRetryable(error) && attempt < retries {
                    attempt += 1
                    continue
                }
                throw ModelStoreErrors.translate(error, doing: doing, url: url)
            }
        }
    }

    /// Runs `body` on one connection outside a transaction (reads see committed data).
    func read<Value: Sendable>(
        _ doing: String, _ body: @escaping @Sendable (Session) async throws -> Value
    ) async throws -> Value {
        do {
            return try await client.withConnection { connection in try await body(Session(connection: connection)) }
        } catch {
            throw ModelStoreErrors.translate(error, doing: doing, url: url)
        }
    }
}

/// One leased connection: statements with parameters, rows collected.
struct Session: @unchecked Sendable {
    // Safety: a session lives only inside the closure its connection was leased for, used by one task.
    let connection: PostgresConnection

    /// Runs a statement and returns its rows.
    @discardableResult
    func query(_ sql: String, _ binds: PostgresBindings = PostgresBindings()) async throws -> [PostgresRow] {
        let rows = try await connection.query(PostgresQuery(unsafeSQL: sql, binds: binds), logger: Database.silent)
        var result: [PostgresRow] = []
        for try await row in rows { result.append(row) }
        return result
    }

    /// Runs a statement, discarding rows.
    func execute(_ sql: String, _ binds: PostgresBindings = PostgresBindings()) async throws {
        try await query(sql, binds)
    }

    /// The first column of the first row as an integer (`count(*)`, a sequence value).
    func integer(_ sql: String, _ binds: PostgresBindings = PostgresBindings()) async throws -> Int64? {
        guard let row = try await query(sql, binds).first else { return nil }
        return try row.decode(Int64?.self)
    }
}
