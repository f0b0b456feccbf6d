import Foundation
import ModelStore
import PostgresNIO
import Testing

@testable import ModelStorePostgreSQL

/// The statements of a session on a connection that has closed fail at once instead of waiting
/// for an answer that PostgresNIO never gives.
@Suite(.enabled(if: PostgreSQLServer.isConfigured, PostgreSQLServer.skipMessage))
struct PostgreSQLSessionTests {
    @Test func aStatementOnAClosedConnectionFailsInsteadOfWaitingForever() async throws {
        let admin = try await AdminConnection.open()
        let connection = admin.connection
        try await connection.close()
        // By now NIO has removed the channel's handlers: a query written now reaches no handler.
        try await connection.closeFuture.get()
        await #expect(throws: ConnectionClosed.self) { try await Session(connection: connection).query("SELECT 1") }
        let error = ModelStoreErrors.translate(ConnectionClosed(), doing: "saving", url: "postgres://u@h/db")
        #expect(error.code == .io)
        #expect(error.message.contains("the connection closed before the server answered"))
    }

    @Test func aStatementWhoseBackendIsTerminatedFailsAndSoDoesTheNext() async throws {
        let admin = try await AdminConnection.open()
        let victim = try await AdminConnection.open()
        let pid = try #require(try await victim.run("SELECT pg_backend_pid()::text").first)
        let session = Session(connection: victim.connection)
        let waiting = Task { try await session.query("SELECT pg_sleep(30)") }
        var running: [String] = []
        for _ in 0..<400 where running.isEmpty {
            try await Task.sleep(for: .milliseconds(25))
            running = try await admin.run(
                "SELECT pid::text FROM pg_stat_activity WHERE pid = \(pid) AND query LIKE '%pg_sleep%' "
                    + "AND state = 'active'")
        }
        try await admin.run("SELECT pg_terminate_backend(\(pid))::text")
        await #expect(throws: (any Error).self) { try await waiting.value }
        // The next statement on the dead connection fails too, whenever it is written.
        await #expect(throws: (any Error).self) { try await session.query("ROLLBACK") }
        // Closed, not only ended: the channel may not have seen the end yet, and PostgresNIO asserts
        // that a connection it frees is closed (seen once in a full run under load).
        try? await victim.close()
        try await admin.close()
    }
}
