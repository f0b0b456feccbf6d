import Foundation
import ModelStore
import ModelStoreAdapterKit
import ModelStoreSQLite
import ModelStoreTestSupport
import Testing

/// `array.contains(element)` runs in SQL for the element kinds whose stored text is one per value,
/// and on SQL's rows for the others; both give Swift's answer.
struct ArrayContainsPushDownTests {
    @Test func containsOnAnArrayOfStringsRunsInSQL() throws {
        let directory = try TemporaryDirectory()
        let schema = try ItemSchema.schema()
        let store = try ItemSchema.store(directory.file("items.sqlite"), schema: schema)
        let entity = try #require(schema.entity(named: "Item"))
        let lists: [[String]] = [[], ["é"], ["e\u{301}x", "\u{0}"], ["x", "/"], ["\n\u{301}"]]
        let snapshots = lists.enumerated().map { index, tags in
            ItemSchema.item(code: "c\(index)", tags: tags, in: entity)
        }
        _ = try store.insert(snapshots)
        func codes(_ filter: StoreFilter) throws -> [String] {
            try store.run(StoreQuery(entityName: "Item", filter: filter)).compactMap {
                if case .string(let code) = $0["code"] { code } else { nil }
            }
        }
        let plan = try store.queryPlan(
            for: StoreQuery(entityName: "Item", filter: .arrayContains("tags", .string("e\u{301}"))))
        #expect(plan.contains { $0.contains("VIRTUAL TABLE") }, "json_each in \(plan)")
        #expect(!plan.contains { $0.contains("evaluated by the store") }, "\(plan)")
        #expect(try codes(.arrayContains("tags", .string("e\u{301}"))) == ["c1"])
        #expect(try codes(.arrayContains("tags", .string("\u{0}"))) == ["c2"])
        #expect(try codes(.arrayContains("tags", .string(""))) == [])
        #expect(try codes(.arrayContains("tags", .string("/"))) == ["c3"])
        #expect(try codes(.arrayContains("tags", .string("\n\u{301}"))) == ["c4"])
        #expect(try codes(.arrayContains("tags", .string("ń"))) == [])
        #expect(try codes(.not(.arrayContains("tags", .string("x")))) == ["c0", "c1", "c2", "c4"])
        // An element kind SQL does not compare exactly is evaluated by the store on SQL's rows.
        let doubles = StoreQuery(entityName: "Item", filter: .arrayContains("tags", .double(1)))
        #expect(try store.queryPlan(for: doubles).last?.contains("evaluated by the store") == true)
        #expect(try codes(.arrayContains("tags", .double(1))) == [])
    }
}
