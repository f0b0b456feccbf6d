import Foundation
import ModelStore
import PostgreSQLTestModels
import Testing

@testable import ModelStorePostgreSQL

/// The fill factor the store creates its entity tables with (`fillFactor`, the URL's `fillfactor`):
/// the setting is read and checked, the server records it on entity tables and not on join tables,
/// and the room it leaves is what lets an update keep a row on its page.
struct PostgreSQLFillFactorTests {
    @Test func theURLSetsTheFillFactorAndRefusesAnythingButAPercentage() throws {
        let plain = try PostgreSQLStoreConfiguration(url: "postgres://me@db.example/app", environment: [:])
        #expect(plain.fillFactor == 90)
        let set = try PostgreSQLStoreConfiguration(url: "postgres://me@db.example/app?fillfactor=70", environment: [:])
        #expect(set.fillFactor == 70)
        #expect(set != plain)
        for text in ["5", "101", "ninety", ""] {
            let error = try #require(throws: DataStoreError.self) {
                try PostgreSQLStoreConfiguration(
                    url: "postgres://me@db.example/app?fillfactor=\(text)", environment: [:])
            }
            #expect(error.code == .invalidConfiguration)
            #expect(
                error.message == "the PostgreSQL store URL's fillfactor '\(text)' is not a percentage from 10 to 100")
        }
        var configuration = plain
        configuration.fillFactor = 0
        let error = try #require(throws: DataStoreError.self) { try configuration.validate() }
        #expect(error.message == "the PostgreSQL store 'postgres://me@db.example:5432/app' has a fill factor of 0%")
    }

    @Test(.enabled(if: PostgreSQLServer.isConfigured, PostgreSQLServer.skipMessage))
    func entityTablesAreCreatedWithTheFillFactorAndJoinTablesWithout() async throws {
        for (fillFactor, expected) in [(90, "{fillfactor=90}"), (55, "{fillfactor=55}"), (100, "")] {
            let namespace = PostgreSQLServer.freshNamespace("ff")
            var configuration = try PostgreSQLServer.configuration(namespace: namespace)
            configuration.fillFactor = fillFactor
            _ = try ModelContainer(for: PostgreSQLArrayInsertTests.schema, configurations: [configuration])
            try await AdminConnection.using { admin in
                let options = try await admin.run(
                    "SELECT c.relname || ':' || coalesce(c.reloptions::text, '') FROM pg_class c "
                        + "JOIN pg_namespace n ON n.oid = c.relnamespace "
                        + "WHERE n.nspname = '\(namespace)' AND c.relkind = 'r' ORDER BY c.relname")
                #expect(
                    options == [
                        "Holder:\(expected)", "Specimen:\(expected)", "Specimen.picks:", "modelstore_history:",
                        "modelstore_meta:",
                    ], "fill factor \(fillFactor)")
            }
        }
    }

    /// Counters inserted in one save fill their table's pages to the fill factor; an update of the
    /// first one's unindexed `value` then writes its new version on the same page when the pages
    /// have room (90), and on another page when they have none (100). The row's address (`ctid`) says
    /// which page it is on.
    @Test(.enabled(if: PostgreSQLServer.isConfigured, PostgreSQLServer.skipMessage))
    func anUpdateStaysOnItsPageOnlyWhenThePagesHaveRoom() async throws {
        for (fillFactor, staysOnPage) in [(90, true), (100, false)] {
            let namespace = PostgreSQLServer.freshNamespace("ffhot")
            var configuration = try PostgreSQLServer.configuration(namespace: namespace)
            configuration.fillFactor = fillFactor
            let container = try ModelContainer(for: Counter.schema, configurations: [configuration])
            let context = ModelContext(container)
            // Names of one length, so every row has the same size and a full page has no room for one.
            for index in 0..<1_000 { context.insert(Counter(name: String(format: "counter-%04d", index))) }
            try context.save()
            let table = "\"\(namespace)\".\"Counter\""
            func page(_ admin: AdminConnection) async throws -> String {
                let address = try await admin.run("SELECT ctid::text FROM \(table) WHERE name = 'counter-0000'")
                return try #require(address.first?.split(separator: ",").first.map(String.init))
            }
            var before = ""
            try await AdminConnection.using { before = try await page($0) }
            let first = try #require(
                try context.fetch(FetchDescriptor<Counter>(predicate: #Predicate { $0.name == "counter-0000" })).first)
            first.value = 7
            try context.save()
            try await AdminConnection.using { admin in
                let after = try await page(admin)
                #expect((after == before) == staysOnPage, "fill factor \(fillFactor): \(before) → \(after)")
                let value = try await admin.run("SELECT value::text FROM \(table) WHERE name = 'counter-0000'")
                #expect(value == ["7"])
            }
        }
    }
}
