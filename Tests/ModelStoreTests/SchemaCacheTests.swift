import Foundation
import ModelStoreInMemory
import ModelStoreTestSupport
import Testing

@testable import ModelStore

/// The schemas containers share: one immutable instance per list of model types, up to a limit.
struct SchemaCacheTests {
    @Test func theSameTypesGiveTheSameSchemaAndOtherListsTheirOwn() throws {
        let cache = SchemaCache(limit: 8)
        let trips = cache.schema(for: [Trip.self])
        #expect(cache.schema(for: [Trip.self]) === trips)
        let authors = cache.schema(for: [Author.self])
        #expect(authors !== trips)
        // The order of the list is part of it: the entities' order follows it.
        let both = cache.schema(for: [Trip.self, Author.self])
        let reversed = cache.schema(for: [Author.self, Trip.self])
        #expect(both !== reversed)
        #expect(both.entities.first?.name == "Trip")
        #expect(reversed.entities.first?.name == "Author")
        // What it keeps is what a schema built anew describes.
        #expect(trips.entities.map(\.name) == Schema([Trip.self]).entities.map(\.name))
        #expect(trips.version == Schema.Version(1, 0, 0))
        #expect(cache.count == 4)
    }

    @Test func pastItsLimitSchemasAreBuiltAndNotKept() {
        let cache = SchemaCache(limit: 2)
        let first = cache.schema(for: [Trip.self])
        _ = cache.schema(for: [Author.self])
        let third = cache.schema(for: [Trip.self, Author.self])
        #expect(cache.count == 2)
        #expect(cache.schema(for: [Trip.self, Author.self]) !== third)
        #expect(cache.schema(for: [Trip.self]) === first)
    }

    @Test func containersForTheSameTypesShareTheirSchema() throws {
        let first = try ModelContainer(for: Trip.self, configurations: InMemoryStoreConfiguration(name: "a"))
        let second = try ModelContainer(for: Trip.self, configurations: InMemoryStoreConfiguration(name: "b"))
        // The process's cache keeps 64 lists; other tests may have filled it, so this holds when it
        // kept this one.
        if Schema.sharedSchemas.schema(for: [Trip.self]) === first.schema {
            #expect(second.schema === first.schema)
        }
        #expect(first.schema.entities.map(\.name) == second.schema.entities.map(\.name))
    }
}
