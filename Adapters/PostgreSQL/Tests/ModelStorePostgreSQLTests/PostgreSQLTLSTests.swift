import Foundation
import ModelStore
import ModelStorePostgreSQL
import PostgreSQLTestModels
import Testing

/// The TLS-only database `scripts/postgres.sh` starts with `MODELSTORE_POSTGRES_TLS=1`.
enum TLSServer {
    static let url = ProcessInfo.processInfo.environment["MODELSTORE_POSTGRES_TLS_URL"]
    static let skipMessage: Comment =
        "MODELSTORE_POSTGRES_TLS_URL is not set: run 'MODELSTORE_POSTGRES_TLS=1 scripts/postgres.sh run -- swift test --package-path Adapters/PostgreSQL'"
}

/// TLS against a server that accepts its database over TLS only: `MODELSTORE_POSTGRES_TLS=1
/// scripts/postgres.sh run -- …` starts one (a self-signed certificate, `hostnossl … reject` for the
/// database) and exports `MODELSTORE_POSTGRES_TLS_URL`.
@Suite(.enabled(if: TLSServer.url != nil, TLSServer.skipMessage))
struct PostgreSQLTLSTests {

    static func configuration(_ change: (inout PostgreSQLStoreConfiguration) -> Void = { _ in }) throws
        -> PostgreSQLStoreConfiguration
    {
        var configuration = try PostgreSQLStoreConfiguration(url: try #require(TLSServer.url))
        configuration.namespace = PostgreSQLServer.freshNamespace("tls")
        change(&configuration)
        return configuration
    }

    @Test func requiredTLSSavesAndFetches() throws {
        let configuration = try Self.configuration()
        #expect(configuration.tls == .require)
        let container = try ModelContainer(for: Counter.schema, configurations: [configuration])
        let context = ModelContext(container)
        context.insert(Counter(name: "over TLS"))
        try context.save()
        let fetched = try ModelContext(container).fetch(FetchDescriptor<Counter>()).map(\.name)
        #expect(fetched == ["over TLS"])
    }

    @Test func withoutTLSTheServerRefusesWithAClearError() throws {
        let configuration = try Self.configuration { $0.tls = .disable }
        let error = try #require(throws: DataStoreError.self) {
            _ = try ModelContainer(for: Counter.schema, configurations: [configuration])
        }
        #expect(error.code == .invalidConfiguration)
        #expect(error.message.contains("without TLS"), "\(error)")
        #expect(error.remedy?.contains("sslmode=require") == true, "\(error)")
        let url = try #require(TLSServer.url)
        let password = try #require(URLComponents(string: url)?.password)
        #expect(!"\(error)".contains(password), "the error shows the password")
    }

    @Test func anUntrustedCertificateFailsTheOpen() throws {
        // Without the test certificate among the trusted roots, the self-signed one is refused.
        let configuration = try Self.configuration { $0.tlsRootCertificatePath = nil }
        #expect(throws: DataStoreError.self) {
            _ = try ModelContainer(for: Counter.schema, configurations: [configuration])
        }
    }
}
