import Foundation
import ModelStore
import ModelStoreAdapters
import ModelStoreCrypto
import ModelStoreTestSupport
import Testing

/// A card whose number and memo are plaintext.
enum SealingV1: VersionedSchema {
    static let versionIdentifier = Schema.Version(1, 0, 0)
    static var models: [any PersistentModel.Type] { [Card.self] }

    final class Card: PersistentModel {
        @Attribute var holder: String = ""
        @Attribute var number: String = ""
        @Attribute var memo: String?
        let persistentBackingData = BackingData()
        init() {}
    }
}

/// The card with its number and memo encrypted.
enum SealingV2: VersionedSchema {
    static let versionIdentifier = Schema.Version(2, 0, 0)
    static var models: [any PersistentModel.Type] { [Card.self] }

    final class Card: PersistentModel {
        @Attribute var holder: String = ""
        @Attribute(.encrypted) var number: String = ""
        @Attribute(.allowsCloudEncryption) var memo: String?
        let persistentBackingData = BackingData()
        init() {}
    }
}

/// The card with its number and memo plaintext again: version 1's class.
enum SealingV3: VersionedSchema {
    static let versionIdentifier = Schema.Version(3, 0, 0)
    static var models: [any PersistentModel.Type] { [SealingV1.Card.self] }
}

/// Lightweight stages that encrypt two attributes, then decrypt them.
enum SealingPlan: SchemaMigrationPlan {
    static var schemas: [any VersionedSchema.Type] { [SealingV1.self, SealingV2.self, SealingV3.self] }
    static var stages: [MigrationStage] {
        [
            .lightweight(fromVersion: SealingV1.self, toVersion: SealingV2.self),
            .lightweight(fromVersion: SealingV2.self, toVersion: SealingV3.self),
        ]
    }
}

/// A lightweight migration that adds or removes `.encrypted` seals or opens the stored values, in
/// every file store and SQLite, through a migration plan's stage or, without one, when the store
/// opens. In the serialized suite, since the attribute keys are the process's.
extension EncryptedAttributeTests {
    private static let migrationKey = try! EncryptionKey(bytes: (0..<32).map { UInt8(($0 &* 29 &+ 5) & 0xFF) })
    static let fileStores = ["json", "log", "sqlite"]

    /// Runs `body` on a context of the store at `url` opened with `schema` (and the plan), then
    /// closes the store, so the next open migrates it again.
    @discardableResult
    private static func withCards<Result>(
        _ schema: any VersionedSchema.Type, _ url: String, plan: Bool = true, _ body: (ModelContext) throws -> Result
    ) throws -> Result {
        let container = try ModelContainer(
            for: Schema(versionedSchema: schema), url: url, migrationPlan: plan ? SealingPlan.self : nil)
        defer { ToolLibrary.close(container) }
        return try body(ModelContext(container))
    }

    private static func seedCards(_ url: String) throws {
        try withCards(SealingV1.self, url, plan: false) { context in
            for (holder, number, memo) in [("Ada", "4111-1111", "gold" as String?), ("Grace", "5500-0000", nil)] {
                let card = SealingV1.Card()
                card.holder = holder
                card.number = number
                card.memo = memo
                context.insert(card)
            }
            try context.save()
        }
    }

    @Test(arguments: fileStores, [true, false])
    func aLightweightMigrationSealsTheValuesOfAnAttributeThatBecomesEncryptedAndOpensThemAgain(
        _ kind: String, plan: Bool
    ) throws {
        try AttributeEncryption.useKeys(current: .key(Self.migrationKey))
        defer { AttributeEncryption.removeKeys() }
        let directory = try TemporaryDirectory()
        let url = Self.url(kind, in: directory)
        try Self.seedCards(url)
        func document() throws -> String {
            String(decoding: try Data(contentsOf: directory.file("patients.json")), as: UTF8.self)
        }
        if kind == "json" {
            // Before the migration the plaintext is there, quoted, as the check after it looks for it.
            #expect(try document().contains("\"4111-1111\"") && document().contains("\"gold\""))
        }

        try Self.withCards(SealingV2.self, url, plan: plan) { context in
            let cards = try context.fetch(FetchDescriptor<SealingV2.Card>(sortBy: [SortDescriptor(\.holder)]))
            #expect(cards.map(\.number) == ["4111-1111", "5500-0000"])
            #expect(cards.map(\.memo) == ["gold", nil])
        }
        if kind == "json" {
            // Whole plaintext values, quoted: a bare "4111" can occur in an identifier's hex digits.
            let stored = try document()
            #expect(!stored.contains("\"4111-1111\"") && !stored.contains("\"gold\""))
            #expect(stored.contains("\"Grace\""))
        }
        // Without the key the sealed values do not open: they are stored sealed.
        AttributeEncryption.removeKeys()
        let sealed = try #require(throws: DataStoreError.self) {
            try Self.withCards(SealingV2.self, url, plan: plan) { _ = try $0.fetch(FetchDescriptor<SealingV2.Card>()) }
        }
        #expect(sealed.code == .invalidConfiguration, "\(sealed)")

        try AttributeEncryption.useKeys(current: .key(Self.migrationKey))
        try Self.withCards(SealingV3.self, url, plan: plan) { context in
            let cards = try context.fetch(FetchDescriptor<SealingV1.Card>(sortBy: [SortDescriptor(\.holder)]))
            #expect(cards.map(\.number) == ["4111-1111", "5500-0000"])
            #expect(cards.map(\.memo) == ["gold", nil])
        }
        // Opened again, the values are plaintext: no key needed.
        AttributeEncryption.removeKeys()
        let plain = try Self.withCards(SealingV3.self, url, plan: plan) {
            try $0.fetch(FetchDescriptor<SealingV1.Card>())
        }
        #expect(Set(plain.map(\.number)) == ["4111-1111", "5500-0000"])
    }

    @Test(arguments: fileStores, [true, false])
    func encryptingAnAttributeWithoutAKeyIsATypedErrorThatChangesNothing(_ kind: String, plan: Bool) throws {
        AttributeEncryption.removeKeys()
        let directory = try TemporaryDirectory()
        let url = Self.url(kind, in: directory)
        try Self.seedCards(url)
        let before = try FileTree.snapshot(directory.url)
        let error = try #require(throws: DataStoreError.self) {
            try Self.withCards(SealingV2.self, url, plan: plan) { _ in }
        }
        #expect(error.code == .invalidConfiguration, "\(error)")
        #expect(error.message.contains("'Card.number'") && error.message.contains("no attribute key"), "\(error)")
        #expect(error.remedy?.contains("AttributeEncryption.useKeys") == true)
        #expect(try FileTree.snapshot(directory.url) == before, "a refused migration changed the files")
        let cards = try Self.withCards(SealingV1.self, url, plan: false) {
            try $0.fetch(FetchDescriptor<SealingV1.Card>())
        }
        #expect(Set(cards.map(\.number)) == ["4111-1111", "5500-0000"])
    }

    @Test(arguments: ["patients.json", "patients.sqlite"])
    func aReadOnlyOpenRefusesAStoreWhoseAttributeEncryptionChanged(_ file: String) throws {
        try AttributeEncryption.useKeys(current: .key(Self.migrationKey))
        defer { AttributeEncryption.removeKeys() }
        let directory = try TemporaryDirectory()
        try Self.seedCards((file.hasSuffix(".json") ? "json:" : "sqlite:") + directory.file(file).path)
        let before = try Data(contentsOf: directory.file(file))
        let error = try #require(throws: DataStoreError.self) {
            _ = try ModelContainer(
                for: Schema(versionedSchema: SealingV2.self),
                configurations: [ModelConfiguration(url: directory.file(file), allowsSave: false)])
        }
        #expect(error.code == .readOnly, "\(error)")
        #expect(try Data(contentsOf: directory.file(file)) == before)
    }

    @Test func aPassphraseKeyWithItsSaltFileSealsAndAnotherDerivationOpens() throws {
        defer { AttributeEncryption.removeKeys() }
        let directory = try TemporaryDirectory()
        let url = Self.url("sqlite", in: directory)
        let saltFile = directory.file("field-key.salt").path
        let phrase = EncryptionKeySource.passphrase("correct horse battery staple")
        try AttributeEncryption.useKeys(current: try AttributeEncryption.passphraseKey(phrase, saltFile: saltFile))
        try Self.seedCards(url)
        try Self.withCards(SealingV2.self, url, plan: false) { _ in }
        // As another process would: the key derived again from the passphrase and the same salt file.
        AttributeEncryption.removeKeys()
        try AttributeEncryption.useKeys(current: try AttributeEncryption.passphraseKey(phrase, saltFile: saltFile))
        let numbers = try Self.withCards(SealingV2.self, url, plan: false) {
            try $0.fetch(FetchDescriptor<SealingV2.Card>()).map(\.number)
        }
        #expect(Set(numbers) == ["4111-1111", "5500-0000"])
        // A passphrase alone is refused, and says where its salt goes.
        let refused = try #require(throws: DataStoreError.self) { try AttributeEncryption.useKeys(current: phrase) }
        #expect(refused.remedy?.contains("passphraseKey") == true, "\(refused)")
    }
}
