import Foundation
import ModelStore
import ModelStorePostgreSQL
import Testing

/// The server the tests run against: `MODELSTORE_POSTGRES_URL` (set by `scripts/postgres.sh run`).
enum PostgreSQLServer {
    static let url = ProcessInfo.processInfo.environment["MODELSTORE_POSTGRES_URL"]

    /// Whether a server is configured; every suite here is disabled, with this message, when not.
    static let isConfigured = url != nil
    static let skipMessage: Comment =
        "MODELSTORE_POSTGRES_URL is not set: run 'scripts/postgres.sh run -- swift test --package-path Adapters/PostgreSQL'"

    /// A namespace no other test uses.
    static func freshNamespace(_ label: String = "t") -> String {
        label + "_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").prefix(16).lowercased()
    }

    /// The namespace for a conformance directory: the same directory gives the same namespace.
    static func namespace(for directory: URL) -> String {
        var hash: UInt64 = 14_695_981_039_346_656_037
        for byte in directory.standardizedFileURL.path.utf8 { hash = (hash ^ UInt64(byte)) &* 1_099_511_628_211 }
        return "c_" + String(hash, radix: 36)
    }

    /// A configuration for the test server in a namespace.
    static func configuration(namespace: String, statementTimeout: Duration? = nil) throws
        -> PostgreSQLStoreConfiguration
    {
        var configuration = try PostgreSQLStoreConfiguration(url: try #require(url))
        configuration.namespace = namespace
        configuration.statementTimeout = statementTimeout
        return configuration
    }
}

/// The guard that keeps a run meant for a server from passing without one: `scripts/postgres.sh run`
/// sets `MODELSTORE_POSTGRES_REQUIRED=1`, and then every suite above must have its server.
struct PostgreSQLServerRequiredTests {
    @Test func aRunThatRequiresAServerHasOne() {
        guard ProcessInfo.processInfo.environment["MODELSTORE_POSTGRES_REQUIRED"] == "1" else { return }
        #expect(
            PostgreSQLServer.isConfigured,
            "scripts/postgres.sh started no server, so every PostgreSQL suite would be skipped")
    }
}

/// Runs synchronous store work on a thread of its own, not on Swift's cooperative pool, which
/// the synchronous conformance cases running in parallel may keep busy.
func onThread(_ work: @escaping @Sendable () throws -> Void) -> Task<Void, any Error> {
    Task {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            Thread.detachNewThread {
                do {
                    try work()
                    continuation.resume()
                } catch {
                    continuation.resume(throwing: error)
                }
            }
        }
    }
}
