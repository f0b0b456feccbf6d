import Foundation
import ModelStore
import ModelStorePostgreSQL
import PostgreSQLTestModels
import Testing

/// This package's `modelstore` on PostgreSQL stores: `inspect` (counts estimated past 10,000 rows
/// unless `--exact`), `verify` (healthy, then damaged by hand in several ways), `schema`, and
/// `convert` from PostgreSQL to SQLite and back. Each test has a namespace of its own.
@Suite(.enabled(if: PostgreSQLServer.isConfigured, PostgreSQLServer.skipMessage))
struct PostgreSQLToolTests {
    private let tool = PostgreSQLTool()

    /// A seeded shelf in a fresh namespace: its URL and configuration.
    private func seededShelf(_ label: String) throws -> (url: String, namespace: String) {
        let namespace = PostgreSQLServer.freshNamespace(label)
        try ToolShelf.seed(try PostgreSQLServer.configuration(namespace: namespace))
        return (try PostgreSQLTool.url(namespace: namespace), namespace)
    }

    @Test func inspectCountsTheModelsAndListsTablesIndexesAndHistoryWithoutThePassword() throws {
        let (url, namespace) = try seededShelf("inspect")
        let report = try tool.json(["inspect", url])
        #expect(PostgreSQLTool.counts(report) == ToolShelf.counts)
        #expect(report["scheme"] as? String == "postgres")
        #expect((report["storeIdentifier"] as? String)?.hasPrefix("postgres-") == true)
        let details = try #require(report["postgres"] as? [String: Any], "\(report)")
        #expect(details["namespace"] as? String == namespace)
        #expect(details["format"] as? Int == 5)
        let tables = (details["tables"] as? [[String: Any]] ?? []).compactMap { $0["name"] as? String }
        #expect(
            Set(tables).isSuperset(of: ["ShelfAuthor", "ShelfBook", "ShelfBook.tags", "ShelfTag", "modelstore_history"])
        )
        let indexes = details["indexes"] as? [[String: Any]] ?? []
        let unique = indexes.first { $0["name"] as? String == "ShelfAuthor.unique.0" }
        #expect(unique?["unique"] as? Bool == true, "\(indexes)")
        let history = try #require(details["history"] as? [String: Any])
        #expect(history["transactionCount"] as? Int == 1)
        #expect((history["byteCount"] as? Int ?? 0) > 0)

        let text = try tool.run(["inspect", url])
        #expect(text.status == 0, "\(text)")
        #expect(text.standardOutput.contains("ShelfBook.tags"), "\(text)")
        #expect(!text.standardOutput.contains("On disk"), "a server's store has no files: \(text)")
        let password = try #require(URLComponents(string: url)?.password)
        #expect(!(text.standardOutput + text.standardError).contains(password), "the tool printed the password")
        #expect(text.standardOutput.contains("***"), "\(text)")
    }

    @Test func inspectEstimatesALargeTableFromItsStatisticsAndCountsExactlyOnRequest() async throws {
        let namespace = PostgreSQLServer.freshNamespace("estimate")
        let configuration = try PostgreSQLServer.configuration(namespace: namespace)
        // A save of 1,000 rows or more analyzes the table, so its statistics say 10,050 rows.
        _ = try ModelContainer(for: Counter.schema, configurations: [configuration])
            .insertCounters(count: 10_050, gaps: false)
        // Rows deleted behind the statistics' back (autovacuum off, so it cannot refresh them meanwhile):
        // the estimate still says 10,050, the count 10,030.
        try await AdminConnection.using { admin in
            try await admin.run("ALTER TABLE \"\(namespace)\".\"Counter\" SET (autovacuum_enabled = false)")
            try await admin.run(
                "DELETE FROM \"\(namespace)\".\"Counter\" WHERE _pk IN "
                    + "(SELECT _pk FROM \"\(namespace)\".\"Counter\" ORDER BY _pk LIMIT 20)")
        }
        let url = try PostgreSQLTool.url(namespace: namespace)
        let estimated = try tool.json(["inspect", url])
        let entity = try #require((estimated["entities"] as? [[String: Any]])?.first, "\(estimated)")
        #expect(entity["modelCount"] as? Int == 10_050, "\(entity)")
        #expect(entity["estimated"] as? Bool == true, "\(entity)")
        let text = try tool.run(["inspect", url])
        #expect(text.standardOutput.contains("about 10050 (estimated)"), "\(text)")

        let exact = try tool.json(["inspect", url, "--exact"])
        let counted = try #require((exact["entities"] as? [[String: Any]])?.first, "\(exact)")
        #expect(counted["modelCount"] as? Int == 10_030, "\(counted)")
        #expect(counted["estimated"] == nil, "\(counted)")
    }

    @Test func verifyFindsAHealthyStoreHealthyWithExactCounts() throws {
        let (url, _) = try seededShelf("healthy")
        let report = try tool.json(["verify", url])
        #expect(report["healthy"] as? Bool == true, "\(report)")
        #expect(PostgreSQLTool.counts(report) == ToolShelf.counts)
        #expect((report["problems"] as? [Any])?.isEmpty == true)
    }

    @Test func verifyNamesEachKindOfDamageDoneByHand() async throws {
        let (url, namespace) = try seededShelf("damaged")
        let ns = "\"\(namespace)\""
        try await AdminConnection.using { admin in
            // A dropped foreign key lets a reference to nowhere in.
            let constraint = try await admin.run(
                "SELECT c.conname::text FROM pg_constraint c JOIN pg_class t ON t.oid = c.conrelid "
                    + "JOIN pg_namespace n ON n.oid = t.relnamespace WHERE n.nspname = '\(namespace)' "
                    + "AND t.relname = 'ShelfBook' AND c.contype = 'f'")
            for name in constraint {
                try await admin.run("ALTER TABLE \(ns).\"ShelfBook\" DROP CONSTRAINT \"\(name)\"")
            }
            try await admin.run("UPDATE \(ns).\"ShelfBook\" SET author = 999999 WHERE title = 'Orlando'")
            // A unique index gone, a column of the wrong type, and a key sequence behind the keys.
            try await admin.run("DROP INDEX \(ns).\"ShelfTag.unique.0\"")
            try await admin.run("ALTER TABLE \(ns).\"ShelfBook\" ALTER COLUMN pages TYPE integer")
            try await admin.run("SELECT setval('\(ns).modelstore_keys', 1)")
        }
        let report = try tool.json(["verify", url], status: 1)
        #expect(report["healthy"] as? Bool == false)
        let problems = (report["problems"] as? [[String: Any]] ?? []).compactMap { $0["reason"] as? String }
        let expected = [
            "has no foreign key to 'ShelfAuthor'", "refers through 'author' to the key 999999",
            "the index 'ShelfTag.unique.0' is missing", "the column 'pages' is of type 'integer', not 'bigint'",
            "the key sequence has given keys up to 1",
        ]
        for fragment in expected {
            #expect(problems.contains { $0.contains(fragment) }, "no problem says '\(fragment)': \(problems)")
        }
        let text = try tool.run(["verify", url])
        #expect(text.status == 1)
        #expect(text.standardOutput.contains("damaged"), "\(text)")
    }

    @Test func aNamespaceWithoutAStoreIsNotFoundAndNothingIsCreated() async throws {
        let namespace = PostgreSQLServer.freshNamespace("empty")
        let url = try PostgreSQLTool.url(namespace: namespace)
        for command in ["inspect", "verify", "schema"] {
            let report = try tool.json([command, url], status: 4)
            let error = try #require(report["error"] as? [String: Any], "\(report)")
            #expect(error["code"] as? String == "notFound", "\(command): \(error)")
            #expect((error["message"] as? String)?.contains("'\(namespace)'") == true, "\(error)")
        }
        try await AdminConnection.using { admin in
            let found = try await admin.run("SELECT nspname::text FROM pg_namespace WHERE nspname = '\(namespace)'")
            #expect(found == [], "the tool created the namespace")
        }
    }

    @Test func schemaPrintsTheRecordedSchema() throws {
        let (url, _) = try seededShelf("schema")
        let report = try tool.json(["schema", url])
        let schema = try #require(report["schema"] as? [String: Any])
        let names = (schema["entities"] as? [[String: Any]] ?? []).compactMap { $0["name"] as? String }
        #expect(Set(names) == ["ShelfAuthor", "ShelfBook", "ShelfTag"])
        let mermaid = try tool.run(["schema", url, "--mermaid"])
        #expect(mermaid.standardOutput.contains("erDiagram"), "\(mermaid)")
    }

    @Test func convertCopiesPostgreSQLToSQLiteAndBackKeepingModelsAndRelationships() throws {
        let (source, _) = try seededShelf("from")
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "pg-tool-" + UUID().uuidString)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = "sqlite:" + directory.appendingPathComponent("shelf.sqlite").path
        let toFile = try tool.json(["convert", source, file])
        #expect(toFile["modelCount"] as? Int == 9, "\(toFile)")
        #expect(toFile["keptPrimaryKeys"] as? Bool == true, "\(toFile)")

        let backNamespace = PostgreSQLServer.freshNamespace("back")
        let back = try PostgreSQLTool.url(namespace: backNamespace)
        let toServer = try tool.json(["convert", file, back])
        #expect(toServer["modelCount"] as? Int == 9, "\(toServer)")
        #expect(PostgreSQLTool.counts(try tool.json(["inspect", back])) == ToolShelf.counts)
        #expect(try tool.json(["verify", back])["healthy"] as? Bool == true)

        let original = try ToolShelf.books(try PostgreSQLServer.configuration(namespace: try namespace(of: source)))
        #expect(original.count == 4)
        #expect(try ToolShelf.books(try PostgreSQLServer.configuration(namespace: backNamespace)) == original)

        // A destination that holds models is refused and left as it was.
        let refused = try tool.json(["convert", file, back], status: 6)
        let error = try #require(refused["error"] as? [String: Any], "\(refused)")
        #expect(error["code"] as? String == "destinationNotEmpty", "\(error)")
        #expect(PostgreSQLTool.counts(try tool.json(["inspect", back])) == ToolShelf.counts)
    }

    private func namespace(of url: String) throws -> String {
        try #require(URLComponents(string: url)?.queryItems?.first { $0.name == "namespace" }?.value)
    }
}
