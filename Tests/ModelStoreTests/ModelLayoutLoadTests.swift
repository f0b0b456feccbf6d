import Foundation
import ModelStore
import ModelStoreInMemory
import ModelStoreTestSupport
import Testing

/// A fetched model's attributes are written from the store's values in line for the common
/// scalar types; a value of another stored kind takes the attribute's codec, which converts what
/// it can and reports what it cannot, naming the property.
struct ModelLayoutLoadTests {
    private func insert(_ values: [String: StoreValue], into container: ModelContainer) throws -> PersistentIdentifier {
        let entity = try #require(container.schema.entity(named: "Kitchen"))
        let snapshot = try DefaultSnapshot(
            persistentIdentifier: .temporary(entityName: entity.name), entity: entity, namedValues: values)
        return try #require(try ModelContext(container).insert(snapshots: [snapshot]).first)
    }

    @Test func scalarsLoadInLineAndOtherKindsThroughTheCodec() throws {
        let container = try ModelContainer(for: Kitchen.self, configurations: .inMemory())
        let date = Date(timeIntervalSinceReferenceDate: 12.5)
        let id = try insert(
            [
                "flag": .bool(true), "int": .int(-7), "int64": .int(.min), "double": .int(3), "string": .string("é"),
                "date": .date(date), "int32": .int(9),
            ], into: container)
        let model = try #require(try ModelContext(container).model(for: id, as: Kitchen.self))
        #expect(model.flag && model.int == -7 && model.int64 == .min && model.string == "é" && model.date == date)
        #expect(model.double == 3, "an integer read into a Double goes through the codec")
        #expect(model.int32 == 9)
    }

    @Test func aValueOfTheWrongKindIsReportedWithItsProperty() throws {
        let container = try ModelContainer(for: Kitchen.self, configurations: .inMemory())
        let id = try insert(["int": .string("seven")], into: container)
        let error = expectError(.invalidValue) { try ModelContext(container).model(for: id, as: Kitchen.self) }
        #expect(error?.message.contains("property 'int'") == true, "\(String(describing: error))")
    }
}
