import Foundation
import ModelStore
import ModelStoreAdapterKit
import ModelStoreInMemory
import ModelStoreSQLite
import ModelStoreTestSupport
import Testing

/// `FetchDescriptor.propertiesToFetch`, as in SwiftData: SQLite decodes only the attributes asked
/// for, the others load on first access (a fault), and nothing a partial fetch left out is ever
/// saved over with initial values.
@Suite struct PropertiesToFetchTests {
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

    private static func container(_ url: URL) throws -> ModelContainer {
        try ModelContainer(for: Article.self, configurations: .sqlite(at: url))
    }

    /// A store with two articles by one writer.
    private static func seeded() throws -> (TemporaryDirectory, URL) {
        let directory = try TemporaryDirectory()
        let url = directory.file("articles.sqlite")
        let context = ModelContext(try container(url))
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
        return (directory, url)
    }

    private static var titlesOnly: FetchDescriptor<Article> {
        var descriptor = FetchDescriptor<Article>(sortBy: [SortDescriptor(\.title)])
        descriptor.propertiesToFetch = [\.title]
        return descriptor
    }

    @Test func theStoreDecodesOnlyTheRequestedAttributesAndSaysSo() throws {
        let (directory, url) = try Self.seeded()
        let container = try Self.container(url)
        let store = try #require(container.stores.first as? SQLiteStore)
        var query = StoreQuery(entityName: "Article", sort: [StoreSortKey(property: "title")])
        query.propertiesToFetch = ["title"]
        let result = try store.fetch(
            DataStoreFetchRequest(descriptor: FetchDescriptor<Article>(), editingState: EditingState(), query: query))
        #expect(result.omitsUnrequestedProperties)
        #expect(result.fetchedSnapshots.map { $0["title"] } == [.string("Engines"), .string("Notes")])
        // The others hold their defaults; the to-one relationship is read.
        #expect(result.fetchedSnapshots.map { $0["body"] } == [.string(""), .string("")])
        #expect(result.fetchedSnapshots.map { $0["rating"] } == [.null, .null])
        #expect(result.fetchedSnapshots.allSatisfy { if case .reference = $0["writer"] { true } else { false } })
        // Without propertiesToFetch, or with a filter left to Swift, rows are whole.
        query.propertiesToFetch = nil
        let whole = try store.fetch(
            DataStoreFetchRequest(descriptor: FetchDescriptor<Article>(), editingState: EditingState(), query: query))
        #expect(!whole.omitsUnrequestedProperties)
        #expect(whole.fetchedSnapshots.map { $0["body"] } == [.string("On the analytical engine"), .string("Note G")])
        withExtendedLifetime(directory) {}
    }

    @Test func anUnfetchedAttributeIsReadFromTheStoreOnFirstAccess() throws {
        let (directory, url) = try Self.seeded()
        let reader = ModelContext(try Self.container(url))
        let articles = try reader.fetch(Self.titlesOnly)
        #expect(articles.map(\.title) == ["Engines", "Notes"])
        // Another container changes a body the reader has not loaded yet: the first access reads
        // the store as it is then, which proves the value was not loaded with the fetch.
        let other = ModelContext(try Self.container(url))
        let engines = try #require(
            try other.fetch(FetchDescriptor<Article>(predicate: #Predicate { $0.title == "Engines" })).first)
        engines.body = "Sketch of the analytical engine"
        try other.save()
        #expect(articles[0].body == "Sketch of the analytical engine")
        #expect(articles[0].views == 10)
        #expect(articles[0].rating == 4.5)
        #expect(articles[1].body == "Note G")
        #expect(articles[0].writer?.name == "Ada")
        #expect(!reader.hasChanges)
        withExtendedLifetime(directory) {}
    }

    @Test func savingAPartlyFetchedModelKeepsEveryStoredValue() throws {
        let (directory, url) = try Self.seeded()
        do {
            let context = ModelContext(try Self.container(url))
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
        let context = ModelContext(try Self.container(url))
        let articles = try context.fetch(FetchDescriptor<Article>(sortBy: [SortDescriptor(\.title)]))
        #expect(articles.map(\.title) == ["Engines, revised", "Notes"])
        #expect(articles.map(\.body) == ["On the analytical engine", "Note G"])
        #expect(articles.map(\.views) == [10, 4])
        #expect(articles.map(\.rating) == [4.5, 4.5])
        #expect(articles.map { $0.writer?.name } == ["Ada", "Charles"])
        withExtendedLifetime(directory) {}
    }

    @Test func aRelationshipChangeAloneLoadsTheAttributesBeforeTheSave() throws {
        let (directory, url) = try Self.seeded()
        do {
            let context = ModelContext(try Self.container(url))
            let articles = try context.fetch(Self.titlesOnly)
            articles[0].writer = nil
            try context.save()
        }
        let context = ModelContext(try Self.container(url))
        let engines = try #require(try context.fetch(Self.titlesOnly).first)
        #expect(engines.writer == nil)
        #expect(engines.body == "On the analytical engine")
        #expect(engines.views == 10)
        withExtendedLifetime(directory) {}
    }

    @Test func deletingAPartlyFetchedModelRecordsItsStoredValues() throws {
        let (directory, url) = try Self.seeded()
        let container = try Self.container(url)
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
        guard let delete = deletes.first else {
            Issue.record("expected a delete, got \(last.changes)")
            return
        }
        #expect(delete.tombstone[\Article.body] == "Note G")
        withExtendedLifetime(directory) {}
    }

    @Test func aModelDeletedElsewhereIsNotSavedWithInitialValues() throws {
        let (directory, url) = try Self.seeded()
        let context = ModelContext(try Self.container(url))
        let articles = try context.fetch(Self.titlesOnly)
        let other = ModelContext(try Self.container(url))
        try other.delete(model: Article.self, where: #Predicate { $0.title == "Engines" })
        // The attributes cannot be loaded any more: they read as initial values, and a save of the
        // model fails instead of writing them.
        #expect(articles[0].body == "")
        articles[0].views = 99
        expectError(.notFound) { try context.save() }
        #expect(try ModelContext(try Self.container(url)).fetchCount(FetchDescriptor<Article>()) == 1)
        withExtendedLifetime(directory) {}
    }

    @Test func aFilterLeftToSwiftOrPendingChangesFetchWholeModels() throws {
        let (directory, url) = try Self.seeded()
        let context = ModelContext(try Self.container(url))
        // A condition SQL cannot run: the context evaluates it on whole snapshots.
        var descriptor = FetchDescriptor<Article>(predicate: #Predicate { $0.body.count > 6 })
        descriptor.propertiesToFetch = [\.title]
        #expect(try context.fetch(descriptor).map(\.title) == ["Engines"])
        // Pending changes of the entity: the fetch merges models, so it reads them whole.
        let draft = Article()
        draft.title = "Draft"
        draft.body = "to be done"
        context.insert(draft)
        var pending = Self.titlesOnly
        pending.predicate = #Predicate { $0.body.contains("e") }
        #expect(try context.fetch(pending).map(\.title) == ["Draft", "Engines", "Notes"])
        withExtendedLifetime(directory) {}
    }

    @Test func aStoreThatReadsWholeRowsReturnsWholeModels() throws {
        let container = try ModelContainer(for: Article.self, configurations: .inMemory())
        let context = ModelContext(container)
        let article = Article()
        article.title = "Engines"
        article.body = "On the analytical engine"
        context.insert(article)
        try context.save()
        let fresh = ModelContext(container)
        let fetched = try fresh.fetch(Self.titlesOnly)
        #expect(fetched.map(\.body) == ["On the analytical engine"])
    }
}
