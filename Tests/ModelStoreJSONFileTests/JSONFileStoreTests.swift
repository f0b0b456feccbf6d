import Foundation
import ModelStore
import ModelStoreAdapterKit
import ModelStoreTestSupport
import Testing

@testable import ModelStoreJSONFile

/// The store through a container and directly: round trips, the file it writes, reopening, batches.
struct JSONFileStoreTests {
    static func everyValue(name: String) -> [String: StoreValue] {
        [
            "name": .string(name), "flag": .bool(true), "int": .int(.min), "int8": .int(-128), "int16": .int(32_767),
            "int32": .int(-2_147_483_648), "int64": .int(.max), "uint": .uint(.max), "uint8": .int(255),
            "uint32": .int(4_294_967_295), "uint64": .uint(.max), "double": .double(0.1 + 0.2),
            "float": .double(Double(Float(3.14159))),
            "decimal": .decimal(Decimal(string: "12345678901234567890.0123456789")!),
            "date": .date(Date(timeIntervalSinceReferenceDate: 754_000_123.456_789_1)),
            "data": .data(Data([0, 1, 2, 253, 254, 255])),
            "uuid": .uuid(UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!),
            "url": .url(URL(string: "https://example.com/path?query=1#fragment")!),
            "optionalString": .string("tab\there \"quoted\" ☃"),
            "optionalInt": .null, "strings": .array([.string("a"), .string(""), .string("\u{1F600}")]),
            "doublesByName": .dictionary(["pi": .double(.pi), "$dollar": .double(-0.0)]),
            "namesByNumber": .array([.array([.int(1), .string("one")]), .array([.int(2), .string("two")])]),
            "tier": .string("pro"), "level": .int(2),
            "dimensions": .dictionary([
                "width": .double(2), "height": .double(1e-9), "label": .string("box"),
                "measuredAt": .date(Date(timeIntervalSinceReferenceDate: -1.25)),
                "serial": .uuid(UUID(uuidString: "00000000-0000-0000-0000-0000000000FF")!),
                "tags": .array([.string("x")]),
            ]),
            "photo": .data(Data(repeating: 7, count: 1000)),
        ]
    }

    @Test func everyValueTypeSurvivesReopening() throws {
        let directory = try TemporaryDirectory()
        let written: [DefaultSnapshot]
        do {
            let store = try Stores.open(directory.file())
            let ids = try Stores.save(store, inserting: [try Stores.new("Gadget", Self.everyValue(name: "first"))])
            let part = try Stores.new("Part", ["label": .string("wheel"), "gadget": .reference(ids[0])])
            try Stores.save(store, inserting: [part])
            written = try Stores.all(store, "Gadget") + Stores.all(store, "Part")
        }
        let reopened = try Stores.open(directory.file())
        let read = try Stores.all(reopened, "Gadget") + Stores.all(reopened, "Part")
        #expect(read.count == 2)
        for (before, after) in zip(written, read) {
            #expect(after.persistentIdentifier == before.persistentIdentifier)
            for property in before.entity.properties {
                #expect(
                    after.values[property.slot].isIdentical(to: before.values[property.slot]),
                    Comment(
                        rawValue: "'\(property.name)' was \(before.values[property.slot]) and read back as "
                            + "\(after.values[property.slot])")
                )
            }
        }
    }

    @Test func modelsRoundTripThroughAContainer() throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("trips.json")
        let origin = Dimensions(
            width: 1.5, height: 2, label: "crate", measuredAt: Date(timeIntervalSinceReferenceDate: 99.5),
            serial: UUID(), tags: ["fragile"])
        do {
            let container = try ModelContainer(for: Gadget.self, configurations: .jsonFile(at: url))
            let context = ModelContext(container)
            let gadget = Gadget(name: "lamp")
            gadget.decimal = Decimal(string: "19.99")!
            gadget.uint64 = .max
            gadget.float = 0.3
            gadget.dimensions = origin
            gadget.level = .two
            gadget.tier = .pro
            gadget.namesByNumber = [3: "three", 1: "one"]
            gadget.photo = Data("picture".utf8)
            gadget.parts = [Part("bulb"), Part("shade")]
            context.insert(gadget)
            try context.save()
        }
        let container = try ModelContainer(for: Gadget.self, configurations: .jsonFile(at: url))
        let context = ModelContext(container)
        let gadget = try #require(try context.fetch(FetchDescriptor<Gadget>()).first)
        #expect(gadget.name == "lamp")
        #expect(gadget.decimal == Decimal(string: "19.99")!)
        #expect(gadget.uint64 == .max)
        #expect(gadget.float == 0.3)
        #expect(gadget.dimensions == origin)
        #expect(gadget.level == .two)
        #expect(gadget.tier == .pro)
        #expect(gadget.namesByNumber == [1: "one", 3: "three"])
        #expect(gadget.photo == Data("picture".utf8))
        #expect(Set(gadget.parts.map(\.label)) == ["bulb", "shade"])
        #expect(gadget.parts.allSatisfy { $0.gadget === gadget })
        let cheap = try context.fetch(FetchDescriptor<Part>(predicate: #Predicate { $0.label == "bulb" }))
        #expect(cheap.map(\.label) == ["bulb"])
    }

    @Test func theFileIsReadableJSONWithAHeader() throws {
        let directory = try TemporaryDirectory()
        let store = try Stores.open(directory.file())
        let ids = try Stores.save(
            store, inserting: [try Stores.new("Gadget", ["name": .string("lamp"), "double": .double(2.5)])])
        try Stores.save(
            store, inserting: [try Stores.new("Part", ["label": .string("bulb"), "gadget": .reference(ids[0])])])
        let text = directory.file().text
        #expect(
            text.hasPrefix(
                "{\n  \"format\": \"ModelStore.JSONFile\",\n  \"formatVersion\": 1,\n  \"checksum\": \"crc32c:"))
        #expect(text.contains("\",\n  \"schemaVersion\": \"1.0.0\",\n"))
        #expect(text.contains("\"storeIdentifier\": \"\(store.identifier)\""))
        #expect(
            text.contains(
                "{\"name\": \"name\", \"swiftType\": \"String\", \"type\": {\"type\":\"string\"}, \"options\": "
                    + "[\"unique\"]}"
            ))
        #expect(text.contains("{\"$id\": 1, \"name\": \"lamp\", \"flag\": false, \"int\": 0,"))
        #expect(text.contains("\"double\": 2.5,"))
        #expect(text.contains("{\"$id\": 2, \"label\": \"bulb\", \"gadget\": 1, \"spare\": null}"))
        // Foundation agrees that it is JSON.
        #expect(throws: Never.self) { try JSONSerialization.jsonObject(with: Data(text.utf8)) }
        // One record per line: diffs show changed records.
        #expect(text.split(separator: "\n").contains { $0.hasPrefix("      {\"$id\": 1, ") && $0.hasSuffix("}") })
    }

    @Test func theHeaderDescribesTheSchemaForTools() throws {
        let directory = try TemporaryDirectory()
        _ = try Stores.open(directory.file())
        let description = try JSONFileStore.storedSchema(at: directory.file())
        #expect(description == Stores.schema.storedDescription)
        // A tool can open the store with the stored schema alone.
        let toolSchema = try Schema(description)
        let store = try Stores.open(directory.file(), schema: toolSchema)
        #expect(try Stores.all(store, "Gadget").isEmpty)
    }

    @Test func identifiersStayTheSameAcrossReopens() throws {
        let directory = try TemporaryDirectory()
        let first = try Stores.open(directory.file())
        let ids = try Stores.save(first, inserting: [try Stores.new("Gadget", ["name": .string("a")])])
        let second = try Stores.open(directory.file())
        #expect(second.identifier == first.identifier)
        #expect(try second.cachedSnapshots(for: ids, editingState: EditingState())[ids[0]] != nil)
    }

    @Test func keysOfDeletedModelsAreNeverReused() throws {
        let directory = try TemporaryDirectory()
        let store = try Stores.open(directory.file())
        let ids = try Stores.save(
            store,
            inserting: [
                try Stores.new("Gadget", ["name": .string("a")]), try Stores.new("Gadget", ["name": .string("b")]),
            ])
        let last = try #require(try Stores.all(store, "Gadget").last)
        try Stores.save(store, deleting: [last])
        let reopened = try Stores.open(directory.file())
        let new = try Stores.save(reopened, inserting: [try Stores.new("Gadget", ["name": .string("c")])])
        #expect(!ids.contains(new[0]))
        #expect(new[0].primaryKey.intValue! > ids[1].primaryKey.intValue!)
    }

    @Test func fetchesNeverTouchTheDisk() throws {
        let directory = try TemporaryDirectory()
        let store = try Stores.open(directory.file())
        try Stores.save(store, inserting: [try Stores.new("Gadget", ["name": .string("a"), "int": .int(3)])])
        try FileManager.default.removeItem(at: directory.file())
        let request = DataStoreFetchRequest<Gadget>(
            descriptor: FetchDescriptor(), editingState: EditingState(),
            query: StoreQuery(entityName: "Gadget", filter: .equal("int", .int(3))))
        #expect(try store.fetch(request).fetchedSnapshots.count == 1)
        #expect(try store.fetchCount(request) == 1)
    }

    @Test func eachSaveKeepsThePreviousFileAsBackup() throws {
        let directory = try TemporaryDirectory()
        let store = try Stores.open(directory.file())
        try Stores.save(store, inserting: [try Stores.new("Gadget", ["name": .string("first")])])
        let afterFirst = directory.file().text
        try Stores.save(store, inserting: [try Stores.new("Gadget", ["name": .string("second")])])
        #expect(directory.file("store.json.backup").text == afterFirst)
        #expect(directory.file().text.contains("second"))
        #expect(!FileManager.default.fileExists(atPath: directory.file("store.json.tmp").path))
    }

    @Test func externalStorageLivesInFilesThatAreCleanedUp() throws {
        let directory = try TemporaryDirectory()
        let store = try Stores.open(directory.file())
        let folder = directory.file("store.json.external")
        func files() -> Set<String> { Set((try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []) }
        let ids = try Stores.save(
            store,
            inserting: [
                try Stores.new("Gadget", ["name": .string("a"), "photo": .data(Data("one".utf8))]),
                try Stores.new("Gadget", ["name": .string("b"), "photo": .data(Data("one".utf8))]),
            ])
        let first = files()
        #expect(first.count == 1, "equal values share one file")
        let name = try #require(first.first)
        #expect(try Data(contentsOf: folder.appendingPathComponent(name)) == Data("one".utf8))
        #expect(directory.file().text.contains("\"photo\": {\"$file\": \"\(name)\"}"))
        #expect(!directory.file().text.contains(Data("one".utf8).base64EncodedString()))

        var snapshots = try Stores.all(store, "Gadget")
        snapshots[0]["photo"] = .data(Data("two".utf8))
        snapshots[1]["photo"] = .data(Data("two".utf8))
        try Stores.save(store, updating: snapshots)
        #expect(files().count == 2, "the backup still refers to the old file")
        try Stores.save(store, updating: [snapshots[0]])
        #expect(files().count == 1, "files neither the document nor its backup refer to are removed")
        #expect(!files().contains(name))

        let reopened = try Stores.open(directory.file())
        let values = try reopened.cachedSnapshots(for: ids, editingState: EditingState()).values.map { $0["photo"] }
        #expect(values.allSatisfy { $0 == .data(Data("two".utf8)) })
    }

    @Test func eraseEmptiesTheFile() throws {
        let directory = try TemporaryDirectory()
        let store = try Stores.open(directory.file())
        try Stores.save(store, inserting: [try Stores.new("Gadget", ["name": .string("a")])])
        try store.erase()
        #expect(try Stores.all(store, "Gadget").isEmpty)
        #expect(try Stores.all(try Stores.open(directory.file()), "Gadget").isEmpty)
    }

    @Test func batchesAreSaved() throws {
        let directory = try TemporaryDirectory()
        let store = try Stores.open(directory.file())
        let editing = EditingState()
        let ids = try store.insert(
            DataStoreBatchInsertRequest(
                snapshots: [
                    try Stores.new("Gadget", ["name": .string("a")]), try Stores.new("Gadget", ["name": .string("b")]),
                    try Stores.new("Gadget", ["name": .string("c")]),
                ], editingState: editing))
        let slot = try #require(Stores.schema.entity(named: "Gadget")?.slot(of: "int"))
        try store.update(
            DataStoreBatchUpdateRequest<Gadget>(
                identifiers: [ids[0], ids[1]], values: [slot: .int(9)], editingState: editing))
        try store.delete(DataStoreBatchDeleteRequest<Gadget>(identifiers: [ids[2]], editingState: editing))
        let reopened = try Stores.open(directory.file())
        let all = try Stores.all(reopened, "Gadget")
        #expect(all.map(\.persistentIdentifier) == [ids[0], ids[1]])
        #expect(all.allSatisfy { $0["int"] == .int(9) })
    }

    @Test func uniqueViolationsLeaveTheFileAlone() throws {
        let directory = try TemporaryDirectory()
        let store = try Stores.open(directory.file())
        try Stores.save(store, inserting: [try Stores.new("Gadget", ["name": .string("a")])])
        let before = directory.file().text
        expectError(.uniqueConstraintViolation) {
            try Stores.save(store, inserting: [try Stores.new("Gadget", ["name": .string("a")])])
        }
        #expect(directory.file().text == before)
        #expect(try Stores.all(store, "Gadget").count == 1)
    }

    @Test func deletingAModelClearsReferencesThatHaveNoInverse() throws {
        let directory = try TemporaryDirectory()
        let store = try Stores.open(directory.file())
        let ids = try Stores.save(store, inserting: [try Stores.new("Part", ["label": .string("spare")])])
        let main = try Stores.save(
            store, inserting: [try Stores.new("Part", ["label": .string("main"), "spare": .reference(ids[0])])])
        let spare = try #require(try Stores.all(store, "Part").first)
        let result = try store.save(
            DataStoreSaveChangesRequest(editingState: EditingState(), inserted: [], updated: [], deleted: [spare]))
        // The reference is cleared in memory, in the file, and reported for the context to re-register.
        #expect(result.snapshotsToReregister[main[0]]?["spare"] == .null)
        #expect(try Stores.all(store, "Part").map { $0["spare"] } == [.null])
        #expect(try Stores.all(try Stores.open(directory.file()), "Part").map { $0["spare"] } == [.null])
        #expect(directory.file().text.contains("\"label\": \"main\", \"gadget\": null, \"spare\": null}"))
    }

    @Test func aReferenceToAModelTheSaveDoesNotInsertIsRefused() throws {
        let directory = try TemporaryDirectory()
        let store = try Stores.open(directory.file())
        let orphan = PersistentIdentifier.temporary(entityName: "Part")
        #expect {
            try Stores.save(
                store, inserting: [try Stores.new("Part", ["label": .string("x"), "spare": .reference(orphan)])])
        } throws: { error in
            (error as? DataStoreError)?.code == .notFound
        }
    }

    @Test func recordsOfEntitiesTheSchemaLacksAreKept() throws {
        let directory = try TemporaryDirectory()
        let fullSchema = Schema(Gadget.self, Memo.self)
        do {
            let store = try Stores.open(directory.file(), schema: fullSchema)
            try Stores.save(store, inserting: [try Stores.new("Gadget", ["name": .string("kept")], schema: fullSchema)])
        }
        // An app (or a widget) that only knows Memo opens the same file and saves.
        let memosOnly = try Stores.open(directory.file(), schema: Schema(Memo.self))
        try Stores.save(
            memosOnly, inserting: [try Stores.new("Memo", ["text": .string("hi")], schema: memosOnly.schema)])
        let full = try Stores.open(directory.file(), schema: fullSchema)
        #expect(try Stores.all(full, "Gadget").map { $0["name"] } == [.string("kept")])
        #expect(try Stores.all(full, "Memo").map { $0["text"] } == [.string("hi")])
    }
}
