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
