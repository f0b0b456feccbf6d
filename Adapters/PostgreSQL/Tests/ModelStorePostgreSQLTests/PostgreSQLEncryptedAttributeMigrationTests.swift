import Foundation
import ModelStore
import ModelStoreCrypto
import ModelStorePostgreSQL
import Testing

/// A ledger entry whose account number and note are plaintext.
enum LedgerV1: VersionedSchema {
    static let versionIdentifier = Schema.Version(1, 0, 0)
    static var models: [any PersistentModel.Type] { [Entry.self] }

    final class Entry: PersistentModel {
        @Attribute var payee: String = ""
        @Attribute var account: String = ""
        @Attribute var note: String?
        let persistentBackingData = BackingData()
        init() {}
    }
}

/// The entry with its account number and note encrypted.
enum LedgerV2: VersionedSchema {
    static let versionIdentifier = Schema.Version(2, 0, 0)
    static var models: [any PersistentModel.Type] { [Entry.self] }

    final class Entry: PersistentModel {
        @Attribute var payee: String = ""
        @Attribute(.encrypted) var account: String = ""
        @Attribute(.encrypted) var note: String?
        let persistentBackingData = BackingData()
        init() {}
    }
}

/// The entry with both plaintext again: version 1's class.
enum LedgerV3: VersionedSchema {
    static let versionIdentifier = Schema.Version(3, 0, 0)
    static var models: [any PersistentModel.Type] { [LedgerV1.Entry.self] }
}

/// Lightweight stages that encrypt the two attributes, then decrypt them.
enum LedgerPlan: SchemaMigrationPlan {
    static var schemas: [any VersionedSchema.Type] { [LedgerV1.self, LedgerV2.self, LedgerV3.self] }
    static var stages: [MigrationStage] {
        [
            .lightweight(fromVersion: LedgerV1.self, toVersion: LedgerV2.self),
            .lightweight(fromVersion: LedgerV2.self, toVersion: LedgerV3.self),
        ]
    }
}

/// An attribute that gains or loses `.encrypted` on PostgreSQL, with a plan's lightweight stage or
/// without a plan: the open seals (or opens) the stored values in its transaction. In the serialized
/// suite, since the attribute keys are the process's.
extension PostgreSQLEncryptedAttributeTests {
    private func open(
        _ namespace: String, _ schema: any VersionedSchema.Type, plan: Bool
    ) throws -> ModelContainer {
        try ModelContainer(
            for: Schema(versionedSchema: schema), migrationPlan: plan ? LedgerPlan.self : nil,
            configurations: [try PostgreSQLServer.configuration(namespace: namespace)])
    }

    /// The namespace's entry rows and their column types, as the server holds them.
    private func stored(_ namespace: String) async throws -> [String] {
        var lines: [String] = []
        try await AdminConnection.using { admin in
            lines = try await admin.run(
                "SELECT column_name || ' ' || data_type FROM information_schema.columns WHERE table_schema = '"
                    + namespace + "' AND table_name = 'Entry' ORDER BY column_name")
            lines += try await admin.run(
                "SELECT row_to_json(t)::text FROM \"\(namespace)\".\"Entry\" t ORDER BY t.\"payee\"")
        }
        return lines
    }

    @Test(arguments: [false, true])
    func anAttributeThatBecomesEncryptedIsSealedInPlaceAndOpenedAgain(plan: Bool) async throws {
        try AttributeEncryption.useKeys(current: .key(Self.key))
        defer { AttributeEncryption.removeKeys() }
        let namespace = PostgreSQLServer.freshNamespace(plan ? "sealp" : "seal")
        do {
            let context = ModelContext(try open(namespace, LedgerV1.self, plan: false))
            for (payee, account, note) in [("Ada", "DE44-5001", "rent" as String?), ("Grace", "FR76-3000", nil)] {
                let entry = LedgerV1.Entry()
                entry.payee = payee
                entry.account = account
                entry.note = note
                context.insert(entry)
            }
            try context.save()
        }
        let plaintext = try await stored(namespace)
        #expect(plaintext.contains { $0.contains("DE44-5001") } && plaintext.contains("account text"), "\(plaintext)")

        // Without the attribute key the open refuses and the namespace stays as it was.
        AttributeEncryption.removeKeys()
        let refused = try #require(throws: DataStoreError.self) { try open(namespace, LedgerV2.self, plan: plan) }
        #expect(refused.code == .invalidConfiguration, "\(refused)")
        #expect(refused.message.contains("'Entry.account'") || refused.message.contains("'Entry.note'"), "\(refused)")
        #expect(try await stored(namespace) == plaintext)

        try AttributeEncryption.useKeys(current: .key(Self.key))
        do {
            let context = ModelContext(try open(namespace, LedgerV2.self, plan: plan))
            let entries = try context.fetch(FetchDescriptor<LedgerV2.Entry>(sortBy: [SortDescriptor(\.payee)]))
            #expect(entries.map(\.account) == ["DE44-5001", "FR76-3000"])
            #expect(entries.map(\.note) == ["rent", nil])
        }
        let sealed = try await stored(namespace)
        #expect(sealed.contains("account bytea") && sealed.contains("note bytea"), "\(sealed)")
        for secret in ["DE44", "FR76", "\"rent\""] {
            #expect(!sealed.contains { $0.contains(secret) }, "the server holds '\(secret)' in plaintext: \(sealed)")
        }

        // Back to plaintext: the values open, and read without a key afterwards.
        do {
            let context = ModelContext(try open(namespace, LedgerV3.self, plan: plan))
            let entries = try context.fetch(FetchDescriptor<LedgerV1.Entry>(sortBy: [SortDescriptor(\.payee)]))
            #expect(entries.map(\.account) == ["DE44-5001", "FR76-3000"])
        }
        AttributeEncryption.removeKeys()
        let entries = try ModelContext(try open(namespace, LedgerV3.self, plan: plan))
            .fetch(FetchDescriptor<LedgerV1.Entry>(sortBy: [SortDescriptor(\.payee)]))
        #expect(entries.map(\.account) == ["DE44-5001", "FR76-3000"])
        #expect(entries.map(\.note) == ["rent", nil])
    }
}
