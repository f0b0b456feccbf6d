import Foundation
import ModelStore
import ModelStoreAdapterKit
import ModelStoreInMemory
import ModelStoreTestSupport
import Testing

struct ValueTypeTests {
    @Test func everyAttributeTypeRoundTripsThroughAStore() throws {
        let container = try ModelContainer(for: Kitchen.self, configurations: .inMemory())
        let context = ModelContext(container)
        let model = Kitchen()
        model.flag = true
        model.int = -42
        model.int8 = .min
        model.int16 = .max
        model.int32 = -7
        model.int64 = .min
        model.uint = .max
        model.uint8 = .max
        model.uint16 = 9
        model.uint32 = .max
        model.uint64 = .max
        model.double = -0.1
        model.float = 3.25
        model.decimal = Decimal(string: "12345678901234567890.123")!
        model.string = "naïve 🚀"
        model.date = Date(timeIntervalSinceReferenceDate: 12345.678901)
        model.data = Data([0, 1, 2, 255])
        model.uuid = UUID()
        model.url = URL(string: "file:///tmp/a%20b")!
        model.optionalString = "present"
        model.strings = ["a", "", "c"]
        model.scores = ["x": 1.5, "y": -2]
        model.counts = [3: "three", -1: "minus one"]
        model.priority = .high
        model.optionalPriority = .low
        model.address = PostalAddress(street: "Via Roma", zip: 100, tags: ["home"])
        model.draft = "not stored"
        model.isSelected = true
        context.insert(model)
        try context.save()

        let fetched = try #require(try ModelContext(container).fetch(FetchDescriptor<Kitchen>()).first)
        #expect(fetched !== model)
        #expect(fetched.flag && fetched.int == -42 && fetched.int8 == .min && fetched.int16 == .max)
        #expect(fetched.int32 == -7 && fetched.int64 == .min && fetched.uint == .max && fetched.uint8 == .max)
        #expect(fetched.uint16 == 9 && fetched.uint32 == .max && fetched.uint64 == .max)
        #expect(fetched.double == -0.1 && fetched.float == 3.25)
        #expect(fetched.decimal == Decimal(string: "12345678901234567890.123")!)
        #expect(fetched.string == "naïve 🚀")
        #expect(fetched.date == model.date)
        #expect(fetched.data == Data([0, 1, 2, 255]))
        #expect(fetched.uuid == model.uuid)
        #expect(fetched.url == model.url)
        #expect(fetched.optionalString == "present")
        #expect(fetched.optionalInt == nil)
        #expect(fetched.strings == ["a", "", "c"])
        #expect(fetched.scores == ["x": 1.5, "y": -2])
        #expect(fetched.counts == [3: "three", -1: "minus one"])
        #expect(fetched.priority == .high)
        #expect(fetched.optionalPriority == .low)
        #expect(fetched.address == PostalAddress(street: "Via Roma", zip: 100, tags: ["home"]))
        #expect(fetched.draft == "", "ephemeral attributes are not stored")
        #expect(fetched.isSelected == false, "transient properties are not stored")
    }

    @Test func snapshotsGiveTypedAccessByName() throws {
        let container = try ModelContainer(for: Kitchen.self, configurations: .inMemory())
        let context = ModelContext(container)
        let model = Kitchen()
        model.string = "hello"
        model.priority = .low
        model.optionalString = nil
        context.insert(model)
        try context.save()
        let entity = try #require(container.schema.entity(for: Kitchen.self))
        let store = try #require(container.stores.first as? InMemoryStore)
        let snapshot = try #require(
            try store.cachedSnapshots(for: [model.persistentModelID], editingState: EditingState()).values.first)
        #expect(try snapshot.value(of: "string", as: String.self) == "hello")
        #expect(try snapshot.value(of: "priority", as: KitchenPriority.self) == .low)
        #expect(try snapshot.value(of: "optionalString", as: String?.self) == nil)
        #expect(snapshot["string"] == .string("hello"))
        #expect(snapshot["missing"] == nil)
        #expect(snapshot.entity == entity)
        expectError(.notFound) { try snapshot.value(of: "missing", as: Int.self) }
        expectError(.invalidValue) { try snapshot.value(of: "string", as: Int.self) }
    }

    @Test func identifiersExposeTheirParts() throws {
        let id = PersistentIdentifier.identifier(for: "store-1", entityName: "Trip", primaryKey: Int64(7))
        #expect(id.primaryKey == .int(7))
        #expect(id.storeIdentifier == "store-1")
        #expect(!id.isTemporary)
        let temporary = PersistentIdentifier.temporary(entityName: "Trip")
        #expect(temporary.isTemporary)
        let decoded = try JSONDecoder().decode(PersistentIdentifier.self, from: JSONEncoder().encode(id))
        #expect(decoded == id)
        let later = PersistentIdentifier.identifier(for: "store-1", entityName: "Trip", primaryKey: Int64(10))
        #expect(id < later, "integer keys order numerically")
        let uuidKey = PersistentIdentifier.identifier(
            for: "s", entityName: "Trip", primaryKey: UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!)
        #expect(uuidKey.primaryKey == .string("E621E1F8-C36C-495A-93FC-0C247A3E6E5F"))
    }
}
