import Foundation
import ModelStore
import ModelStoreAppendLog
import ModelStoreTestSupport
import Testing

/// The fixture models as a later version of an app might declare them.
enum Version2 {
    final class Note: PersistentModel {
        @Attribute(.unique) var title: String = ""
        @Attribute(originalName: "body") var text: String = ""
        @Attribute var rank: Int = 0
        @Attribute(.preserveValueOnDeletion) var code: String = ""
        @Attribute var priority: Int = 3
        @Attribute var created: Date = Date(timeIntervalSinceReferenceDate: 0)
        @Relationship var folder: Folder?

        let persistentBackingData = BackingData()
        init() {}
    }

    final class Folder: PersistentModel {
        @Attribute var name: String = ""
        @Relationship(deleteRule: .cascade, inverse: \Note.folder) var notes: [Note] = []

        let persistentBackingData = BackingData()
        init() {}
    }

    final class Label: PersistentModel {
        @Attribute var text: String = ""

        let persistentBackingData = BackingData()
        init() {}
    }
}

struct AppendLogSchemaChangeTests {
    @Test func aChangedSchemaReadsPropertiesByNameAndOriginalName() throws {
        let directory = try TemporaryDirectory(memoryBacked: true)
        do {
            let store = try openStore(directory.store)
            try save(store, inserting: [try noteSnapshot("Kept", rank: 4, body: "old text")])
            store.close()
        }
        let schema = Schema(Version2.Note.self, Version2.Folder.self, version: Schema.Version(2, 0, 0))
        var store = try openStore(directory.store, schema: schema)
        let snapshot = try #require(try contents(of: store).values.first)
        #expect(snapshot["title"] == "\"Kept\"")
        #expect(snapshot["text"] == "\"old text\"")
        #expect(snapshot["rank"] == "4")
        #expect(snapshot["priority"] == "3")
        #expect(snapshot["tags"] == nil)
        // New saves go to a segment written with the new schema.
        try save(
            store,
            inserting: [
                try DefaultSnapshot(
                    persistentIdentifier: .temporary(entityName: "Note"),
                    entity: try #require(schema.entity(named: "Note")),
                    namedValues: ["title": .string("New"), "priority": .int(1)])
            ])
        #expect(store.info.segments.count == 2)
        #expect(store.info.schemaVersion == Schema.Version(2, 0, 0))
        let expected = try contents(of: store)
        store.close()
        store = try openStore(directory.store, schema: schema)
        #expect(try contents(of: store) == expected)
        // A compaction rewrites everything in the new shape.
        try store.compact()
        store.close()
        #expect(try contents(of: try openStore(directory.store, schema: schema)) == expected)
    }

    @Test func modelsOfAnEntityTheSchemaLacksStopTheOpen() throws {
        let directory = try TemporaryDirectory(memoryBacked: true)
        do {
            let store = try openStore(directory.store)
            try save(store, inserting: [try noteSnapshot("Orphan")])
            store.close()
        }
        expectError(.invalidSchema) {
            try openStore(directory.store, schema: Schema(Version2.Label.self))
        }
    }
}
