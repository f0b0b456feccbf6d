import Foundation
import ModelStore
import ModelStoreAdapters
import ModelStoreCrypto
import ModelStoreSync
import ModelStoreTestSupport
import Testing

/// A patient whose identifying number and notes are encrypted attributes.
final class Patient: PersistentModel {
    @Attribute var name: String = ""
    @Attribute(.unique, .encrypted) var nationalNumber: String = ""
    @Attribute(.allowsCloudEncryption) var notes: String?
    @Attribute(.encrypted) var readings: [Double] = []

    let persistentBackingData = BackingData()
    init() {}

    convenience init(name: String, nationalNumber: String, notes: String? = nil, readings: [Double] = []) {
        self.init()
        self.name = name
        self.nationalNumber = nationalNumber
        self.notes = notes
        self.readings = readings
    }
}

/// `@Attribute(.encrypted)`: values are sealed before they reach any store, read back under the
/// key, refused under another, and filtered and sorted on the models.
///
/// Serialized: the attribute keys are the process's, and these tests change them. No other suite
/// uses an encrypted attribute.
@Suite(.serialized) struct EncryptedAttributeTests {
    private static let key = try! EncryptionKey(bytes: (0..<32).map { UInt8(($0 &* 13 &+ 1) & 0xFF) })
    private static let nextKey = try! EncryptionKey(bytes: (0..<32).map { UInt8(($0 &* 17 &+ 9) & 0xFF) })

    static let stores = ["memory", "json", "log", "sqlite"]

    static func url(_ kind: String, in directory: TemporaryDirectory) -> String {
        switch kind {
        case "memory": "memory:patients-\(UUID().uuidString)"
        case "json": "json:" + directory.file("patients.json").path
        case "log": "log:" + directory.file("patients-log").path
        default: "sqlite:" + directory.file("patients.sqlite").path
        }
    }

    /// Every file under `directory`, to look for plaintext.
    private static func fileContents(_ directory: TemporaryDirectory) -> [(String, Data)] {
        let paths = (FileManager.default.enumerator(atPath: directory.url.path)?.allObjects as? [String]) ?? []
        return paths.compactMap { path in
            (try? Data(contentsOf: directory.url.appending(path: path))).map { (path, $0) }
        }
    }

    @Test func theSchemaStoresEncryptedValuesAsDataAndRecordsTheOption() throws {
        let entity = try #require(Schema([Patient.self]).entity(for: Patient.self))
        #expect(entity.attribute(named: "nationalNumber")?.valueType == .data)
        #expect(entity.attribute(named: "notes")?.valueType == .optional(.data))
        #expect(entity.attribute(named: "nationalNumber")?.options.contains(.encrypted) == true)
        #expect(entity.attribute(named: "notes")?.options.contains(.encrypted) == true, "SwiftData's spelling")
        #expect(entity.attribute(named: "name")?.options.contains(.encrypted) == false)
        #expect(Schema.Attribute.Options(names: Schema.Attribute.Options.encrypted.names) == .encrypted)
    }

    @Test(arguments: stores)
    func valuesAreSealedInTheStoreAndReadBackUnderTheKey(_ kind: String) throws {
        try AttributeEncryption.useKeys(current: .key(Self.key))
        defer { AttributeEncryption.removeKeys() }
        let directory = try TemporaryDirectory()
        let url = Self.url(kind, in: directory)
        // An in-memory store lives while a container has it open; a file store is opened again.
        let keptOpen = kind == "memory" ? try ModelContainer(for: Patient.self, url: url) : nil
        do {
            let context = ModelContext(try keptOpen ?? ModelContainer(for: Patient.self, url: url))
            context.insert(
                Patient(name: "Ada", nationalNumber: "NX-271828", notes: "allergic to penicillin", readings: [36.6]))
            context.insert(Patient(name: "Grace", nationalNumber: "NX-314159"))
            try context.save()
        }
        for (path, data) in Self.fileContents(directory) {
            for secret in ["NX-271828", "NX-314159", "penicillin"] {
                #expect(data.range(of: Data(secret.utf8)) == nil, "'\(path)' holds '\(secret)' in plaintext")
            }
        }

        do {
            let context = ModelContext(try keptOpen ?? ModelContainer(for: Patient.self, url: url))
            let all = try context.fetch(FetchDescriptor<Patient>(sortBy: [SortDescriptor(\.name)]))
            #expect(all.map(\.nationalNumber) == ["NX-271828", "NX-314159"])
            #expect(all.map(\.notes) == ["allergic to penicillin", nil])
            #expect(all.map(\.readings) == [[36.6], []])

            // A predicate and a sort on an encrypted attribute run on the models, and explain says so.
            let descriptor = FetchDescriptor<Patient>(
                predicate: #Predicate { $0.nationalNumber == "NX-314159" || $0.notes != nil },
                sortBy: [SortDescriptor(\.nationalNumber, order: .reverse)])
            let explanation = try context.explain(descriptor)
            #expect(explanation.conditions.map(\.location) == [.models], "\(explanation)")
            #expect("\(explanation)".contains("reads 'nationalNumber', which is encrypted"), "\(explanation)")
            #expect(explanation.sortLocation == .models, "\(explanation)")
            #expect(try context.fetch(descriptor).map(\.name) == ["Grace", "Ada"])

            // An edit is sealed too, and nil stays nil.
            all[0].notes = nil
            all[1].nationalNumber = "NX-161803"
            try context.save()
        }
        let again = ModelContext(try keptOpen ?? ModelContainer(for: Patient.self, url: url))
        let edited = try again.fetch(FetchDescriptor<Patient>(sortBy: [SortDescriptor(\.name)]))
        #expect(edited.map(\.nationalNumber) == ["NX-271828", "NX-161803"])
        #expect(edited.map(\.notes) == [nil, nil])
    }

    @Test(arguments: stores)
    func equalValuesSealAlikeSoUniquenessAndUpsertWork(_ kind: String) throws {
        try AttributeEncryption.useKeys(current: .key(Self.key))
        defer { AttributeEncryption.removeKeys() }
        let directory = try TemporaryDirectory()
        let container = try ModelContainer(for: Patient.self, url: Self.url(kind, in: directory))
        let first = ModelContext(container)
        first.insert(Patient(name: "Ada", nationalNumber: "NX-271828"))
        try first.save()
        // A second insert of the same number is an upsert of the stored patient (SwiftData's default).
        let second = ModelContext(container)
        second.insert(Patient(name: "Ada Lovelace", nationalNumber: "NX-271828"))
        try second.save()
        let patients = try ModelContext(container).fetch(FetchDescriptor<Patient>())
        #expect(patients.map(\.name) == ["Ada Lovelace"])
        #expect(patients.map(\.nationalNumber) == ["NX-271828"])
    }

    @Test func syncMovesSealedValuesAndEditsOfOtherAttributesDoNotClash() async throws {
        try AttributeEncryption.useKeys(current: .key(Self.key))
        defer { AttributeEncryption.removeKeys() }
        let directory = try TemporaryDirectory()
        let schema = Schema([Patient.self]).includingSyncMetadata()
        let host = try SyncHost(
            container: ModelContainer(for: schema, url: "sqlite:" + directory.path("shared.sqlite")))
        func replica(_ url: String) throws -> (ModelContainer, SyncEngine) {
            let container = try ModelContainer(for: schema, url: url)
            return (container, try SyncEngine(container: container, transport: InProcessSyncTransport(host: host)))
        }
        let (a, engineA) = try replica("sqlite:" + directory.path("a.sqlite"))
        let (b, engineB) = try replica("json:" + directory.path("b.json"))
        do {
            let context = ModelContext(a)
            context.insert(Patient(name: "Ada", nationalNumber: "NX-271828", notes: "first visit"))
            try context.save()
        }
        try await engineA.syncNow()
        // The engines and the host move the sealed bytes as they are: no key is needed to sync them.
        AttributeEncryption.removeKeys()
        try await engineB.syncNow()
        try AttributeEncryption.useKeys(current: .key(Self.key))
        let onB = try ModelContext(b).fetch(FetchDescriptor<Patient>())
        #expect(onB.map(\.nationalNumber) == ["NX-271828"])
        #expect(onB.map(\.notes) == ["first visit"])
        for (path, data) in Self.fileContents(directory) {
            #expect(data.range(of: Data("NX-271828".utf8)) == nil, "'\(path)' holds the number in plaintext")
        }

        // An edit of another attribute on each side: the sealed values saved again are the same
        // bytes, so neither side sees a change to them and nothing clashes.
        let contextA = ModelContext(a)
        try #require(try contextA.fetch(FetchDescriptor<Patient>()).first).name = "Ada Lovelace"
        try contextA.save()
        let contextB = ModelContext(b)
        try #require(try contextB.fetch(FetchDescriptor<Patient>()).first).readings = [36.6, 37.1]
        try contextB.save()
        try await engineA.syncNow()
        let round = try await engineB.syncNow()
        try await engineA.syncNow()
        #expect(round.conflicts == 0)
        #expect(try engineA.conflicts.list().isEmpty && engineB.conflicts.list().isEmpty)
        for container in [a, b] {
            let patients = try ModelContext(container).fetch(FetchDescriptor<Patient>())
            #expect(patients.map(\.name) == ["Ada Lovelace"])
            #expect(patients.map(\.readings) == [[36.6, 37.1]])
            #expect(patients.map(\.nationalNumber) == ["NX-271828"])
        }
    }

    @Test func anotherKeyIsATypedErrorAndAPreviousKeyStillOpens() throws {
        let directory = try TemporaryDirectory()
        let url = Self.url("sqlite", in: directory)
        defer { AttributeEncryption.removeKeys() }
        try AttributeEncryption.useKeys(current: .key(Self.key))
        do {
            let context = ModelContext(try ModelContainer(for: Patient.self, url: url))
            context.insert(Patient(name: "Ada", nationalNumber: "NX-271828"))
            try context.save()
        }

        try AttributeEncryption.useKeys(current: .key(Self.nextKey))
        let refused = expectError(.wrongKey) {
            try ModelContext(try ModelContainer(for: Patient.self, url: url)).fetch(FetchDescriptor<Patient>())
        }
        #expect(refused?.message.contains("'nationalNumber'") == true, "\(String(describing: refused))")

        // Rotation: the old key opens what it sealed; a save seals under the new one.
        try AttributeEncryption.useKeys(current: .key(Self.nextKey), previous: [.key(Self.key)])
        do {
            let context = ModelContext(try ModelContainer(for: Patient.self, url: url))
            let ada = try #require(try context.fetch(FetchDescriptor<Patient>()).first)
            #expect(ada.nationalNumber == "NX-271828")
            ada.nationalNumber = "NX-271829"
            try context.save()
        }
        try AttributeEncryption.useKeys(current: .key(Self.nextKey))
        let context = ModelContext(try ModelContainer(for: Patient.self, url: url))
        #expect(try context.fetch(FetchDescriptor<Patient>()).map(\.nationalNumber) == ["NX-271829"])
    }

    @Test func withoutAKeyASaveFailsAndSaysHowToGiveOne() throws {
        AttributeEncryption.removeKeys()
        let directory = try TemporaryDirectory()
        let container = try ModelContainer(for: Patient.self, url: Self.url("sqlite", in: directory))
        let context = ModelContext(container)
        context.insert(Patient(name: "Ada", nationalNumber: "NX-271828"))
        let error = expectError(.invalidConfiguration) { try context.save() }
        #expect(error?.message.contains("'nationalNumber'") == true, "\(String(describing: error))")
        #expect(error?.remedy?.contains("AttributeEncryption.useKeys") == true)
        #expect(try ModelContext(container).fetchCount(FetchDescriptor<Patient>()) == 0, "nothing was stored")
    }

    @Test func aPassphraseIsRefusedAsAnAttributeKey() {
        let error = expectError(.invalidConfiguration) {
            try AttributeEncryption.useKeys(current: .passphrase("correct horse"))
        }
        #expect(error?.message.contains("passphrase") == true)
    }

    @Test func aChangedOrMovedSealedValueFailsAuthentication() throws {
        try AttributeEncryption.useKeys(current: .key(Self.key))
        defer { AttributeEncryption.removeKeys() }
        let sealer = try #require(AttributeSealing.sealer)
        let plaintext = Array("{\"string\":\"NX-271828\"}".utf8)
        let sealed = try sealer.seal(plaintext, attribute: "nationalNumber")
        #expect(try sealer.seal(plaintext, attribute: "nationalNumber") == sealed, "sealing is deterministic")
        #expect(try sealer.seal(plaintext, attribute: "other") != sealed, "and bound to the attribute")
        #expect(try sealer.open(sealed, attribute: "nationalNumber") == plaintext)
        var flipped = sealed
        flipped[flipped.count / 2] ^= 0x01
        expectError(.corrupted) { try sealer.open(flipped, attribute: "nationalNumber") }
        expectError(.corrupted) { try sealer.open(sealed, attribute: "notes") }
        expectError(.corrupted) { try sealer.open(Array(sealed.prefix(20)), attribute: "nationalNumber") }
    }
}
