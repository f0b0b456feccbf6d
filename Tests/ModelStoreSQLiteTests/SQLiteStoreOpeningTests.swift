import Foundation
import ModelStore
import ModelStoreTestSupport
import Testing

@testable import ModelStoreSQLite

/// The store's path is `url.standardizedFileURL.path`, computed without standardizing a path
/// that is already standard.
struct SQLiteStorePathTests {
    /// Seeded random paths of ordinary, dotted, empty and special components, with and without a
    /// trailing slash: the store's path is Foundation's standardized path for each.
    @Test func theStorePathIsFoundationsStandardizedPath() {
        let parts = [
            "a", "store.sqlite", ".hidden", "a.b", "...", "..x", "x..", "", ".", "..", "~", "private", "var",
            "automount",
            "tmp", "é", "with space",
        ]
        var generator = SplitMix64(seed: 0x5EED_0048)
        var paths = [
            "/", "/a", "/a/b.sqlite", "/a/./b", "/a/../b", "/a//b", "/a/b/", "/private/tmp/x", "/var/automount/x",
        ]
        for _ in 0..<2_000 {
            let count = Int.random(in: 1...6, using: &generator)
            var path = (0..<count).map { _ in parts.randomElement(using: &generator)! }.joined(separator: "/")
            path = "/" + path
            if Bool.random(using: &generator) { path += "/" }
            paths.append(path)
        }
        var fast = 0
        for path in paths {
            let url = URL(filePath: path)
            let expected = url.standardizedFileURL.path
            #expect(SQLiteStoreConfiguration.standardizedPath(of: url) == expected, "\(path)")
            if url.path == expected { fast += 1 }
        }
        // Both kinds were drawn: paths already standard and paths that are not.
        #expect(fast > 100 && fast < paths.count - 100)
    }
}

/// Stores opened with one schema instance share its entities' layouts; another instance gets its own.
struct SQLiteLayoutSharingTests {
    @Test func storesOfOneSchemaShareLayouts() throws {
        let directory = try TemporaryDirectory()
        let schema = try ItemSchema.schema()
        func open(_ file: String, _ schema: Schema) throws -> SQLiteStore {
            var configuration = SQLiteStoreConfiguration(url: directory.file(file))
            configuration.schema = schema
            return try SQLiteStore(configuration, migrationPlan: nil)
        }
        let first = try open("a.sqlite", schema)
        let second = try open("b.sqlite", schema)
        let item = try #require(first.layouts["Item"])
        #expect(second.layouts["Item"] === item)
        #expect(item.entity.name == "Item")
        // The layouts are the schema's: every entity has one, and nothing else does.
        #expect(Set(first.layouts.keys) == Set(schema.entities.map(\.name)))
        let other = try open("c.sqlite", try ItemSchema.schema())
        #expect(other.layouts["Item"] !== item)
        #expect(other.layouts["Item"]?.columnList == item.columnList)
    }
}

/// The recorded schemas an open decoded are kept by their bytes: each text gives what decoding it
/// gives, even beside a canonically equivalent text that Swift's `==` would call the same.
struct SQLiteKeptSchemaTests {
    static func meta(entity name: String, version: Int) throws -> StoreMeta {
        let description = Schema.Description(
            version: Schema.Version(version, 0, 0),
            entities: [Schema.EntityDescription(name: name, properties: [.attribute("title", .string)])])
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let text = String(decoding: try encoder.encode(description), as: UTF8.self)
        return StoreMeta(format: SQLiteStore.formatVersion, identifier: "id", schemaJSON: text, nextKey: 1)
    }

    @Test func eachTextGivesItsOwnSchema() throws {
        let composed = try Self.meta(entity: "Caf\u{E9}", version: 41)
        let decomposed = try Self.meta(entity: "Cafe\u{301}", version: 41)
        #expect(composed.schemaJSON == decomposed.schemaJSON, "Swift's == calls them equal")
        #expect(Array(composed.schemaJSON.utf8) != Array(decomposed.schemaJSON.utf8))
        for _ in 0..<2 {  // decoded, then kept
            let first = try composed.schema(path: "a")
            let second = try decomposed.schema(path: "b")
            #expect(Array(first.entities[0].name.unicodeScalars) == Array("Caf\u{E9}".unicodeScalars))
            #expect(Array(second.entities[0].name.unicodeScalars) == Array("Cafe\u{301}".unicodeScalars))
        }
        let other = try Self.meta(entity: "Caf\u{E9}", version: 42)
        #expect(try other.schema(path: "c").version == Schema.Version(42, 0, 0))
    }
}
