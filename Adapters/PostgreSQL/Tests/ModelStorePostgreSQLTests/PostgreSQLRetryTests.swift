import Foundation
import ModelStore
import PostgreSQLTestModels
import Testing

@testable import ModelStorePostgreSQL

/// Serialization failures (SQLSTATE 40001) and deadlocks (40P01): the transaction runs again, up
/// to the configured number of times, then the save reports `.conflict`.
@Suite(.enabled(if: PostgreSQLServer.isConfigured, PostgreSQLServer.skipMessage))
struct PostgreSQLRetryTests {
    /// A statement that makes the server report a serialization failure, as a conflicting
    /// `SERIALIZABLE` transaction would.
    private static let failure =
        "DO $$ BEGIN RAISE EXCEPTION 'conflicting transaction' USING ERRCODE = 'serialization_failure'; END $$"

    private func store(retries: Int) throws -> PostgreSQLStore {
        var configuration = try PostgreSQLServer.configuration(namespace: PostgreSQLServer.freshNamespace())
        configuration.serializationRetries = retries
        let container = try ModelContainer(for: Counter.schema, configurations: [configuration])
        return try #require(container.stores.first as? PostgreSQLStore)
    }

    @Test func aSerializationFailureIsRetried() async throws {
        let store = try store(retries: 3)
        let attempts = LockedValue(0)
        let result = try await store.database.transaction("testing") { session in
            let attempt = attempts.withLock {
                $0 += 1
                return $0
            }
            if attempt < 3 { try await session.execute(Self.failure) }
            return attempt
        }
        #expect(result == 3)
    }

    @Test func aSerializationFailurePastTheRetriesIsReportedAsAConflict() async throws {
        let store = try store(retries: 1)
        let attempts = LockedValue(0)
        let error = await #expect(throws: DataStoreError.self) {
            try await store.database.transaction("saving") { session in
                attempts.withLock { $0 += 1 }
                try await session.execute(Self.failure)
            }
        }
        #expect(error?.code == .conflict)
        #expect(attempts.withLock { $0 } == 2)
    }
}
