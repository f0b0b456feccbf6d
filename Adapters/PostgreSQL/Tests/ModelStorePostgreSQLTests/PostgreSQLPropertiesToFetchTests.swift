import Foundation
import ModelStore
import ModelStoreAdapterKit
import ModelStorePostgreSQL
import Testing

/// `FetchDescriptor.propertiesToFetch` on PostgreSQL: the store selects only the attributes asked
/// for (and every relationship), and nothing a partial fetch left out is ever saved over with
/// initial values (an `UPDATE` writes every column) or missing from a tombstone (which the `DELETE`
/// returns). The context's side (loading the rest on first access) is the SQLite suite's
/// `PropertiesToFetchTests`.
@Suite(.enabled(if: PostgreSQLServer.isConfigured, PostgreSQLServer.skipMessage))
struct PostgreSQLPropertiesToFetchTests {
    final class Writer: PersistentModel {
        @Attribute var name: String = ""
        @Relationship(inverse: \Article.writer) var articles: [Article] = []
        let persistentBackingData = BackingData()
        init() {}
    }

    final class Article: PersistentModel {
        @Attribute(.unique) var title: String = ""
        @Attribute(.preserveValueOnDeletion) var body: String = ""
        @Attribute var views: Int = 0
        @Attribute var rating: Double? = nil
        @Relationship var writer: Writer?
        let persistentBackingData = BackingData()
        init() {}
    }

    /// A container in `namespace`.
    private static func container(_ namespace: String) throws -> ModelContainer {
        try ModelContainer(
            for: Schema([Article.self, Writer.self]),
            configurations: [try PostgreSQLServer.configuration(namespace: namespace)])
    }

    /// A fresh namespace with two articles by one writer.
    private static func seeded() throws -> String {
        let namespace = PostgreSQLServer.freshNamespace("ptf")
        let context = ModelContext(try container(namespace))
        let writer = Writer()
        writer.name = "Ada"
        for (title, body, views) in [("Engines", "On the analytical engine", 10), ("Notes", "Note G", 3)] {
            let article = Article()
            article.title = title
            article.body = body
            article.views = views
            article.rating = 4.5
            article.writer = writer
            context.insert(article)
        }
        try context.save()
        return namespace
    }

    private static var titlesOnly: FetchDescriptor<Article> {
        var descriptor = FetchDescriptor<Article>(sortBy: [SortDescriptor(\.title)])
        descriptor.propertiesToFetch = [\.title]
        return descriptor
    }

    @Test func theStoreSelectsOnlyTheRequestedAttributesAndSaysSo() throws {
        let container = try Self.container(try Self.seeded())
        let store = try #require(container.stores.first as? PostgreSQLStore)
        var query = StoreQuery(entityName: "Article", sort: [StoreSortKey(property: "title")])
        query.propertiesToFetch = ["title"]
        let result = try store.fetch(
            DataStoreFetchRequest(descriptor: FetchDescriptor<Article>(), editingState: EditingState(), query: query))
        #expect(result.omitsUnrequestedProperties)
        #expect(result.fetchedSnapshots.map { $0["title"] } == [.string("Engines"), .string("Notes")])
        // The others hold their defaults; the to-one relationship is read.
        #expect(result.fetchedSnapshots.map { $0["body"] } == [.string(""), .string("")])
        #expect(result.fetchedSnapshots.map { $0["views"] } == [.int(0), .int(0)])
        #expect(result.fetchedSnapshots.map { $0["rating"] } == [.null, .null])
        #expect(result.fetchedSnapshots.allSatisfy { if case .reference = $0["writer"] { true } else { false } })
        // Without propertiesToFetch, or with a filter left to the store, rows are whole.
        query.propertiesToFetch = nil
        let whole = try store.fetch(
            DataStoreFetchRequest(descriptor: FetchDescriptor<Article>(), editingState: EditingState(), query: query))
        #expect(!whole.omitsUnrequestedProperties)
        #expect(whole.fetchedSnapshots.map { $0["body"] } == [.string("On the analytical engine"), .string("Note G")])
        // A regular expression is evaluated by the store on whole rows, so they are read whole.
        var residual = StoreQuery(entityName: "Article", filter: .text(StorePath("body"), .matchesRegex("G$")))
        residual.propertiesToFetch = ["title"]
        let filtered = try store.fetch(
            DataStoreFetchRequest(descriptor: FetchDescriptor<Article>(), editingState: EditingState(), query: residual)
        )
        #expect(!filtered.omitsUnrequestedProperties)
        #expect(filtered.fetchedSnapshots.map { $0["body"] } == [.string("Note G")])
    }

    @Test func savingAPartlyFetchedModelKeepsEveryStoredValue() throws {
        let namespace = try Self.seeded()
        do {
            let context = ModelContext(try Self.container(namespace))
            let articles = try context.fetch(Self.titlesOnly)
            // An attribute that was fetched, one that was not, and a relationship.
            articles[0].title = "Engines, revised"
            articles[1].views += 1
            let writer = Writer()
            writer.name = "Charles"
            context.insert(writer)
            let notes = try context.fetch(Self.titlesOnly).last
            notes?.writer = writer
            try context.save()
        }
        let context = ModelContext(try Self.container(namespace))
        let articles = try context.fetch(FetchDescriptor<Article>(sortBy: [SortDescriptor(\.title)]))
        #expect(articles.map(\.title) == ["Engines, revised", "Notes"])
        #expect(articles.map(\.body) == ["On the analytical engine", "Note G"])
        #expect(articles.map(\.views) == [10, 4])
        #expect(articles.map(\.rating) == [4.5, 4.5])
        #expect(articles.map { $0.writer?.name } == ["Ada", "Charles"])
    }

    @Test func deletingAPartlyFetchedModelRecordsItsStoredValues() throws {
        let container = try Self.container(try Self.seeded())
        let context = ModelContext(container)
        let articles = try context.fetch(Self.titlesOnly)
        context.delete(articles[1])
        try context.save()
        #expect(try ModelContext(container).fetch(FetchDescriptor<Article>()).map(\.title) == ["Engines"])
        // The tombstone keeps the body, which the fetch left out.
        let last = try #require(
            try ModelContext(container).fetchHistory(HistoryDescriptor<DefaultHistoryTransaction>()).last)
        let deletes = last.changes.compactMap { change -> DefaultHistoryDelete<Article>? in
            if case .delete(let delete as DefaultHistoryDelete<Article>) = change { return delete }
            return nil
        }
        #expect(deletes.first?.tombstone[\Article.body] == "Note G")
    }
}
