import Foundation
import Logging
import NIOPosix
import PostgresNIO

/// A plain connection to the test server, beside the store's own pool: for holding locks and
/// ending the store's backends, as another process would.
struct AdminConnection {
    let connection: PostgresConnection

    static func open() async throws -> AdminConnection {
        let environment = ProcessInfo.processInfo.environment
        let configuration = PostgresConnection.Configuration(
            host: environment["PGHOST"] ?? "127.0.0.1", port: Int(environment["PGPORT"] ?? "") ?? 5432,
            username: environment["PGUSER"] ?? "modelstore", password: environment["PGPASSWORD"],
            database: environment["PGDATABASE"] ?? "modelstore", tls: .disable)
        let connection = try await PostgresConnection.connect(
            configuration: configuration, id: 1, logger: Logger(label: "tests"))
        return AdminConnection(connection: connection)
    }

    /// Runs a statement and returns the first column of each row as text.
    @discardableResult
    func run(_ sql: String) async throws -> [String] {
        var result: [String] = []
        for try await row in try await connection.query(PostgresQuery(unsafeSQL: sql), logger: Logger(label: "tests")) {
            let cell = row.makeRandomAccess()[0]
            result.append(cell.bytes == nil ? "" : (try? cell.decode(String.self)) ?? "")
        }
        return result
    }

    /// The process ids of the server backends, other than this connection's, that wait for a lock
    /// while running a statement on a table of `namespace` (tests run in parallel, each in its own).
    ///
    /// Clears the statistics snapshot first: inside a transaction (the tests poll while holding a
    /// lock in one) the server otherwise answers every later poll from the snapshot the first took
    /// (`stats_fetch_consistency = cache`), and a backend that started waiting after it is never seen.
    func backendsWaitingForLocks(in namespace: String) async throws -> [String] {
        try await run("SELECT pg_stat_clear_snapshot()::text")
        return try await run(
            "SELECT pid::text FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND pid <> pg_backend_pid() "
                + "AND position('\"\(namespace)\"' in query) > 0")
    }

    /// Polls ``backendsWaitingForLocks(in:)`` every 25 ms, for 30 s at most, until a backend waits;
    /// returns the waiting backends (none when none waited by then).
    func awaitBackendsWaitingForLocks(in namespace: String) async throws -> [String] {
        var waiting: [String] = []
        for _ in 0..<1200 where waiting.isEmpty {
            try await Task.sleep(for: .milliseconds(25))
            waiting = try await backendsWaitingForLocks(in: namespace)
        }
        return waiting
    }

    func close() async throws { try await connection.close() }

    /// Runs `body` with a connection that is closed however `body` ends (PostgresNIO traps on a
    /// connection released unclosed, which would turn a failed expectation into a crash of the run).
    @discardableResult
    static func using<Result>(_ body: (AdminConnection) async throws -> Result) async throws -> Result {
        let admin = try await open()
        let result: Result
        do {
            result = try await body(admin)
        } catch {
            try? await admin.close()
            throw error
        }
        try await admin.close()
        return result
    }
}
