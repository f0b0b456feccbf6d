import Foundation
import ModelStore
import ModelStoreInMemory
import ModelStorePostgreSQL
import PostgreSQLTestModels
import Testing

/// Sorts that SQL runs give exactly the order the in-memory store gives: Swift's `<` on integers
/// and strings, `nil` first, ties broken by identifier.
@Suite(.enabled(if: PostgreSQLServer.isConfigured, PostgreSQLServer.skipMessage))
struct PostgreSQLSortTests {
    /// Names whose orders differ between Swift, byte order of non-NFC text and common collations.
    static let names = [
        "b", "a", "Z", "é", "f", "éa", "e\u{301}z", "ä", "a\u{308}b", "\u{0}x", "\u{1}", "", "zz", "Éclair",
        "eclair", "ß", "ss", "日本", "\u{1F600}", "I", "ı",
    ]

    static let sorts: [[SortDescriptor<Counter>]] = [
        [SortDescriptor(\.name)],
        [SortDescriptor(\.name, order: .reverse)],
        [SortDescriptor(\.value)],
        [SortDescriptor(\.value, order: .reverse)],
        [SortDescriptor(\.value), SortDescriptor(\.name, order: .reverse)],
        [SortDescriptor(\.value, order: .reverse), SortDescriptor(\.name)],
    ]

    @Test func sortsPushedToSQLMatchTheInMemoryStore() throws {
        let configuration = try PostgreSQLServer.configuration(namespace: PostgreSQLServer.freshNamespace("sort"))
        let server = try ModelContainer(for: Counter.schema, configurations: [configuration])
        let memory = try ModelContainer(for: Counter.schema, configurations: [InMemoryStoreConfiguration()])
        for container in [server, memory] {
            let context = ModelContext(container)
            for (index, name) in Self.names.enumerated() {
                let counter = Counter(name: name)
                counter.value = (index * 7) % 4
                context.insert(counter)
            }
            try context.save()
        }
        for sort in Self.sorts {
            for (offset, limit) in [(0, nil), (3, 5)] as [(Int, Int?)] {
                var descriptor = FetchDescriptor<Counter>(sortBy: sort)
                descriptor.fetchOffset = offset
                descriptor.fetchLimit = limit
                let pushed = try ModelContext(server).fetch(descriptor).map(\.name)
                let reference = try ModelContext(memory).fetch(descriptor).map(\.name)
                #expect(
                    pushed.map { Array($0.unicodeScalars) } == reference.map { Array($0.unicodeScalars) },
                    "\(sort) offset \(offset) limit \(String(describing: limit))")
            }
        }
    }
}
