import Foundation
import Logging
import PostgresNIO

/// The PostgreSQL server the benchmarks run against, from the variables `scripts/postgres.sh` exports.
enum Server {
    /// The store URL ModelStore opens (`MODELSTORE_POSTGRES_URL`).
    static func storeURL() throws -> String {
        guard let url = ProcessInfo.processInfo.environment["MODELSTORE_POSTGRES_URL"] else { throw missing }
        return url
    }

    /// The same server for PostgresNIO and Fluent, from `PGHOST`, `PGPORT`, `PGUSER`, `PGPASSWORD`, `PGDATABASE`.
    static func configuration() throws -> PostgresConnection.Configuration {
        let environment = ProcessInfo.processInfo.environment
        guard let host = environment["PGHOST"], let user = environment["PGUSER"] else { throw missing }
        return PostgresConnection.Configuration(
            host: host, port: environment["PGPORT"].flatMap(Int.init) ?? 5432, username: user,
            password: environment["PGPASSWORD"], database: environment["PGDATABASE"], tls: .disable)
    }

    /// A logger that says nothing below errors, so logging costs every system the same nothing.
    static let logger: Logger = {
        var logger = Logger(label: "modelstore-pg-bench")
        logger.logLevel = .error
        return logger
    }()

    /// A new connection whose unqualified names resolve in `namespace`.
    static func connect(namespace: String? = nil) async throws -> PostgresConnection {
        let connection = try await PostgresConnection.connect(
            configuration: configuration(), id: Int.random(in: 1..<Int.max), logger: logger)
        if let namespace { try await connection.query("SET search_path TO \(unescaped: namespace)", logger: logger) }
        return connection
    }

    /// Creates the empty schema `namespace`, dropping an earlier one of that name.
    static func createNamespace(_ namespace: String) async throws {
        let connection = try await connect()
        defer { Task { try? await connection.close() } }
        try await connection.query("DROP SCHEMA IF EXISTS \(unescaped: namespace) CASCADE", logger: logger)
        try await connection.query("CREATE SCHEMA \(unescaped: namespace)", logger: logger)
        try await connection.close()
    }

    /// Drops the schema `namespace` and everything in it.
    static func dropNamespace(_ namespace: String) async throws {
        let connection = try await connect()
        try await connection.query("DROP SCHEMA IF EXISTS \(unescaped: namespace) CASCADE", logger: logger)
        try await connection.close()
    }

    /// Vacuums the table `table` of the schema `namespace` (outside a transaction): what the
    /// repetitions before deleted no longer takes pages a `DELETE` scans.
    static func vacuum(_ table: String, in namespace: String) async throws {
        let connection = try await connect()
        try await connection.query("VACUUM \(unescaped: namespace).\(unescaped: table)", logger: logger)
        try await connection.close()
    }

    private static var missing: WrongResult {
        WrongResult(
            "no server: run under scripts/postgres.sh run -- …, which exports MODELSTORE_POSTGRES_URL and PG* "
                + "(see Benchmarks/PostgreSQLBenchmarks/README.md)")
    }
}

/// The users table Fluent and PostgresNIO use: the same columns, unique email and name index as the
/// ModelStore model's table.
enum UsersTable {
    static let create = """
        CREATE TABLE users (id bigserial PRIMARY KEY, name text NOT NULL, age bigint NOT NULL, \
        email text NOT NULL UNIQUE, joined timestamptz NOT NULL, score double precision NOT NULL)
        """
    static let index = "CREATE INDEX users_name ON users (name)"
}
