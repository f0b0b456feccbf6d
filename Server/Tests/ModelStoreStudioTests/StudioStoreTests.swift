import Foundation
import ModelStore
import Testing

@testable import ModelStoreStudio

@Suite struct StudioStoreTests {
    @Test func opensAStoreWithoutItsModelTypes() throws {
        let fixture = try LibraryFixture()
        defer { fixture.remove() }
        let store = try StudioStore(url: fixture.url)
        defer { store.close() }
        #expect(store.entities.map(\.name) == ["Author", "Book"])
        #expect(try store.count(StoreQuery(entityName: "Author")) == 30)
        let authors = try store.fetch(
            StoreQuery(
                entityName: "Author", filter: .compare("born", .equal, .int(1901)), sort: [.init(property: "name")]))
        #expect(authors.compactMap { $0["name"] } == [.string("author 001")])
        #expect(store.keepsHistory)
    }

    @Test func refusesAMissingStoreAndAMemoryStore() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("studio-\(UUID().uuidString)")
        let missing = "sqlite:" + folder.appendingPathComponent("none.sqlite").path
        #expect {
            try StudioStore(url: missing)
        } throws: { error in
            (error as? StudioError)?.kind == .notFound && "\(error)".contains("there is no store at")
        }
        #expect(!FileManager.default.fileExists(atPath: folder.path))
        #expect {
            try StudioStore(url: "memory:")
        } throws: { error in
            "\(error)".contains("keeps no schema")
        }
    }

    @Test func refusesAnEditOfAModelThatChangedSinceThePageShowedIt() throws {
        let fixture = try LibraryFixture()
        defer { fixture.remove() }
        let store = try StudioStore(url: fixture.url)
        defer { store.close() }
        let shown = try #require(
            try store.fetch(StoreQuery(entityName: "Author", filter: .equal("name", .string("author 002")))).first)
        let expected = shown.entity.attributes.map { shown.values[$0.slot] }
        try fixture.setBorn("author 002", 1800)
        #expect {
            try store.update(shown.persistentIdentifier, attribute: "nickname", to: .string("x"), expected: expected)
        } throws: { error in
            (error as? StudioError)?.kind == .conflict && "\(error)".contains("'born'")
        }
        #expect(try fixture.born("author 002") == 1800)
    }
}

@Suite struct KeysetPagingTests {
    /// Pages through every author by `born` (many ties) in both orders, and checks the pages together
    /// are the store's whole sorted list, each model once.
    @Test(arguments: [true, false]) func pagesCoverEveryModelOnceInOrder(ascending: Bool) throws {
        let fixture = try LibraryFixture(authors: 130)
        defer { fixture.remove() }
        let store = try StudioStore(url: fixture.url)
        defer { store.close() }
        let entity = try store.entity(named: "Author")
        // A nil sort value on some models: sort by the optional nickname.
        for (property, sizes) in [("born", [7, 50]), ("nickname", [9])] {
            let sort = StoreSortKey(property: property, ascending: ascending)
            let all = try store.fetch(StoreQuery(entityName: "Author", sort: [sort])).map(\.persistentIdentifier)
            for size in sizes {
                var cursor: PageCursor?
                var seen: [PersistentIdentifier] = []
                while true {
                    var page = try store.fetch(
                        PageCursor.query(entityName: "Author", filter: nil, sort: sort, after: cursor, pageSize: size))
                    let more = page.count > size
                    if more { page.removeLast() }
                    seen += page.map(\.persistentIdentifier)
                    guard more else { break }
                    let slot = entity.attribute(named: property)!.slot
                    cursor = PageCursor.next(after: cursor, sorted: true, values: page.map { $0.values[slot] })
                }
                #expect(seen == all, "sorted by \(property), pages of \(size)")
            }
        }
    }

    @Test func aCursorSurvivesItsLinkAndAForgedOneIsRefused() throws {
        let cursor = PageCursor(value: .null, skip: 3)
        #expect(try PageCursor(token: cursor.token) == cursor)
        #expect(throws: StudioError.self) { try PageCursor(token: "not-a-cursor") }
    }
}

@Suite struct ChangeWatcherTests {
    /// Runs `body` with a watch that looks every 20 ms at a fresh library store.
    func withWatcher(_ body: (LibraryFixture, StudioStore, ChangeWatcher) async throws -> Void) async throws {
        let fixture = try LibraryFixture()
        defer { fixture.remove() }
        let store = try StudioStore(url: fixture.url)
        defer { store.close() }
        let watcher = ChangeWatcher(store: store, interval: .milliseconds(20))
        defer { watcher.stop() }
        try await body(fixture, store, watcher)
    }

    @Test(.timeLimit(.minutes(1))) func seesAChangeAnotherWriterCommits() async throws {
        try await withWatcher { fixture, store, watcher in
            var numbers = watcher.subscribe().makeAsyncIterator()
            let first = try #require(await numbers.next())
            #expect(first == (try store.newestTransactionNumber()))
            try fixture.setBorn("author 001", 1850)
            let next = try #require(await numbers.next())
            #expect(next > first)
            #expect(try store.history(limit: 1).first?.author == "other")
        }
    }

    /// A page rendered at the newest transaction hears of the next change, not of the one it shows.
    @Test(.timeLimit(.minutes(1))) func sendsOnlyTransactionsAfterThePagesOwn() async throws {
        try await withWatcher { fixture, store, watcher in
            let rendered = try store.newestTransactionNumber()
            var numbers = watcher.subscribe(after: rendered).makeAsyncIterator()
            try fixture.setBorn("author 001", 1850)
            let next = try #require(await numbers.next())
            #expect(next > rendered)
            #expect(next == (try store.newestTransactionNumber()))
        }
    }

    /// A change committed after a page was rendered and seen by the watch before the page subscribed
    /// (another page's subscription keeps the watch running) is the first thing the page hears.
    @Test(.timeLimit(.minutes(1))) func sendsAChangeMadeBeforeThePageSubscribedAtOnce() async throws {
        try await withWatcher { fixture, _, watcher in
            var otherPage = watcher.subscribe().makeAsyncIterator()
            let rendered = try #require(await otherPage.next())
            try fixture.setBorn("author 001", 1850)
            let changed = try #require(await otherPage.next())
            #expect(changed > rendered)
            var page = watcher.subscribe(after: rendered).makeAsyncIterator()
            #expect(await page.next() == changed)
        }
    }
}

@Suite struct HistoryPageTests {
    @Test func listsAtMostAHundredChangesOfATransaction() throws {
        let fixture = try LibraryFixture(authors: 130)
        defer { fixture.remove() }
        let store = try StudioStore(url: fixture.url)
        defer { store.close() }
        let html = try HistoryPage(store: store, before: nil).render()
        #expect(html.matches(of: /<span class="kind insert">/).count == HistoryPage.changesShown)
        #expect(html.contains("… and 40 more changes"))
        #expect(html.contains("140 changes"))
    }
}
