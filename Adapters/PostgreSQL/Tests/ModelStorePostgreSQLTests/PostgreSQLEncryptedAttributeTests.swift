import Foundation
import ModelStore
import ModelStoreCrypto
import ModelStorePostgreSQL
import Testing

/// A dossier whose code and summary are encrypted before they leave the process.
final class Dossier: PersistentModel {
    @Attribute var title: String = ""
    @Attribute(.unique, .encrypted) var code: String = ""
    @Attribute(.encrypted) var summary: String?

    let persistentBackingData = BackingData()
    init() {}

    convenience init(title: String, code: String, summary: String?) {
        self.init()
        self.title = title
        self.code = code
        self.summary = summary
    }
}

/// `@Attribute(.encrypted)` on PostgreSQL: the server stores and logs only sealed bytes.
@Suite(.enabled(if: PostgreSQLServer.isConfigured, PostgreSQLServer.skipMessage), .serialized)
struct PostgreSQLEncryptedAttributeTests {
    static let key = try! EncryptionKey(bytes: (0..<32).map { UInt8(($0 &* 29 &+ 7) & 0xFF) })

    private func container(_ namespace: String) throws -> ModelContainer {
        try ModelContainer(
            for: Schema([Dossier.self]), configurations: [try PostgreSQLServer.configuration(namespace: namespace)])
    }

    @Test func theServerHoldsOnlySealedBytesAndTheClientReadsThemBack() async throws {
        try AttributeEncryption.useKeys(current: .key(Self.key))
        let namespace = PostgreSQLServer.freshNamespace("enc")
        do {
            let context = ModelContext(try container(namespace))
            context.insert(Dossier(title: "first", code: "K-7734-ALPHA", summary: "met at the harbour"))
            context.insert(Dossier(title: "second", code: "K-1123-BRAVO", summary: nil))
            try context.save()
        }
        try await AdminConnection.using { admin in
            let columns = try await admin.run(
                "SELECT column_name || ' ' || data_type FROM information_schema.columns WHERE table_schema = '"
                    + namespace + "' AND column_name IN ('code', 'summary') ORDER BY column_name")
            #expect(columns == ["code bytea", "summary bytea"])
            let rows = try await admin.run("SELECT row_to_json(t)::text FROM \"\(namespace)\".\"Dossier\" t")
            let history = try await admin.run("SELECT body::text FROM \"\(namespace)\".\"modelstore_history\"")
            #expect(rows.count == 2)
            for text in rows + history {
                for secret in ["K-7734", "K-1123", "harbour", "4b2d373733"] {
                    #expect(!text.contains(secret), "the server holds '\(secret)' in plaintext: \(text)")
                }
            }
        }

        let context = ModelContext(try container(namespace))
        let descriptor = FetchDescriptor<Dossier>(
            predicate: #Predicate { $0.code.starts(with: "K-7") }, sortBy: [SortDescriptor(\.code)])
        #expect(try context.explain(descriptor).conditions.map(\.location) == [.models])
        let found = try context.fetch(descriptor)
        #expect(found.map(\.title) == ["first"])
        #expect(found.map(\.summary) == ["met at the harbour"])

        // The unique constraint holds on the sealed bytes: the same code again is an upsert.
        context.insert(Dossier(title: "first, revised", code: "K-7734-ALPHA", summary: nil))
        try context.save()
        let all = try ModelContext(try container(namespace)).fetch(
            FetchDescriptor<Dossier>(sortBy: [SortDescriptor(\.title)]))
        #expect(all.map(\.title) == ["first, revised", "second"])
        #expect(all.map(\.code) == ["K-7734-ALPHA", "K-1123-BRAVO"])
    }
}
