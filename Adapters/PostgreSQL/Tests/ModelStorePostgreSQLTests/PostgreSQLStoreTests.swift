import Foundation
import ModelStore
import PostgreSQLTestModels
import Testing

@testable import ModelStorePostgreSQL

/// Storage details of `PostgreSQLStore`: text that PostgreSQL cannot hold as it is, and a
/// namespace that belongs to another program.
struct PostgreSQLStoreTests {
    /// Strings over a few awkward scalars, drawn from a seed so a failure can be replayed.
    private func strings(seed: UInt64, count: Int) -> [String] {
        var random = SplitMix(seed: seed)
        func next() -> UInt64 { random.next() }
        let alphabet: [Unicode.Scalar] = ["\u{0}", "\u{1}", "\u{2}", "a", "\u{301}", "é"]
        return (0..<count).map { _ in
            var scalars = String.UnicodeScalarView()
            for _ in 0..<Int(next() % 5) { scalars.append(alphabet[Int(next() % UInt64(alphabet.count))]) }
            return String(scalars)
        }
    }

    @Test(arguments: [1, 2, 3] as [UInt64])
    func escapedTextRoundTripsAndKeepsScalarOrder(seed: UInt64) {
        let values = strings(seed: seed, count: 200)
        for value in values {
            let stored = ColumnType.escapingNUL(value)
            #expect(!stored.unicodeScalars.contains("\u{0}"))
            #expect(ColumnType.unescapingNUL(stored).unicodeScalars.elementsEqual(value.unicodeScalars))
        }
        for (a, b) in zip(values, values.reversed()) {
            let original = a.unicodeScalars.lexicographicallyPrecedes(b.unicodeScalars)
            let escaped = ColumnType.escapingNUL(a).unicodeScalars.lexicographicallyPrecedes(
                ColumnType.escapingNUL(b).unicodeScalars)
            #expect(original == escaped, "\(Array(a.unicodeScalars)) vs \(Array(b.unicodeScalars))")
        }
    }

    @Test(.enabled(if: PostgreSQLServer.isConfigured, PostgreSQLServer.skipMessage))
    func aNamespaceWithAnotherProgramsTablesFailsTheOpenAndIsLeftAlone() async throws {
        let namespace = PostgreSQLServer.freshNamespace("other")
        try await AdminConnection.using { admin in
            try await admin.run("CREATE SCHEMA \"\(namespace)\"")
            try await admin.run("CREATE TABLE \"\(namespace)\".accounts (id int PRIMARY KEY, owner text)")
            try await admin.run("INSERT INTO \"\(namespace)\".accounts VALUES (1, 'theirs')")
            let configuration = try PostgreSQLServer.configuration(namespace: namespace)
            let error = try #require(throws: DataStoreError.self) {
                try ModelContainer(for: Counter.schema, configurations: [configuration])
            }
            #expect(error.code == .corrupted)
            let tables = try await admin.run(
                "SELECT tablename::text FROM pg_tables WHERE schemaname = '\(namespace)' ORDER BY tablename")
            #expect(tables == ["accounts"])
            #expect(try await admin.run("SELECT owner FROM \"\(namespace)\".accounts") == ["theirs"])
        }
    }
}
