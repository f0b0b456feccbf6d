import Foundation
import ModelStore
import ModelStoreTestSupport
import Testing

/// A save result made with the permanent identifiers in the request's order.
struct SaveResultTests {
    @Test func identifiersInRequestOrderAlsoReadAsTheMapping() throws {
        let entity = try #require(Schema([Trip.self, Item.self, Destination.self]).entity(named: "Trip"))
        let values = [StoreValue](repeating: .null, count: entity.properties.count)
        let new = DefaultSnapshot(persistentIdentifier: .temporary(entityName: "Trip"), entity: entity, values: values)
        let kept = DefaultSnapshot(
            persistentIdentifier: .identifier(for: "store", entityName: "Trip", primaryKey: Int64(7)), entity: entity,
            values: values)
        let minted = PersistentIdentifier.identifier(for: "store", entityName: "Trip", primaryKey: Int64(8))
        var result = DataStoreSaveChangesResult<DefaultSnapshot>(
            for: "store", inserted: [new, kept], mintedInOrder: [minted, nil])
        #expect(result.mintedIdentifiersInRequestOrder == [minted, nil])
        #expect(result.remappedIdentifiers == [new.persistentIdentifier: minted], "a kept identifier is not remapped")
        let copy = result
        #expect(copy.remappedIdentifiers == result.remappedIdentifiers)
        result.remappedIdentifiers = [:]
        #expect(result.remappedIdentifiers.isEmpty && result.mintedIdentifiersInRequestOrder == nil)
        #expect(copy.remappedIdentifiers.count == 1, "a copy keeps its own mapping")
    }

    @Test func identifiersOfEveryInsertReadInOrderAndAsTheMapping() throws {
        let entity = try #require(Schema([Trip.self, Item.self, Destination.self]).entity(named: "Trip"))
        let values = [StoreValue](repeating: .null, count: entity.properties.count)
        let new = (0..<3).map { _ in
            DefaultSnapshot(persistentIdentifier: .temporary(entityName: "Trip"), entity: entity, values: values)
        }
        let kept = DefaultSnapshot(
            persistentIdentifier: .identifier(for: "store", entityName: "Trip", primaryKey: Int64(1)), entity: entity,
            values: values)
        let request = DataStoreSaveChangesRequest(
            editingState: EditingState(), inserted: new + [kept], updated: [], deleted: [])
        var chunks: [[DefaultSnapshot]] = []
        request.forEachInsertedChunk { chunks.append($0) }
        #expect(chunks.map { $0.map(\.persistentIdentifier) } == [request.inserted.map(\.persistentIdentifier)])
        #expect(request.insertedCount == 4)

        var identifiers = PersistentIdentifiers()
        identifiers.append(storeIdentifier: "store", entityName: "Trip", keys: 10...12)
        identifiers.append(kept.persistentIdentifier)
        let result = DataStoreSaveChangesResult<DefaultSnapshot>(
            for: "store", inserted: request, identifiers: identifiers)
        #expect(result.mintedIdentifiersInRequestOrder == Array(identifiers))
        let expected = Dictionary(uniqueKeysWithValues: zip(new.map(\.persistentIdentifier), identifiers.prefix(3)))
        #expect(result.remappedIdentifiers == expected, "a kept identifier is not remapped")
    }
}
