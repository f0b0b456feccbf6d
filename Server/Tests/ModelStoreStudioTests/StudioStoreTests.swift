import Foundation
import ModelStore
import Synchronization
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

/// The uniqueness check the studio's edits run for a store that leaves uniqueness to the context.
@Suite struct StudioUniquenessCheckTests {
    @Test func refusesAKeyAnotherModelHoldsAndAcceptsItsOwnAndNil() throws {
        let fixture = try LibraryFixture(scheme: "json")
        defer { fixture.remove() }
        let store = try StudioStore(url: fixture.url)
        defer { store.close() }
        let entity = try store.entity(named: "Author")
        let nameSlot = try #require(entity.slot(of: "name"))
        let author = try #require(
            try store.fetch(StoreQuery(entityName: "Author", filter: .equal("name", .string("author 007")))).first)
        var changed = author
        changed.values[nameSlot] = .string("author 008")
        #expect {
            try store.checkUniqueness(of: changed, in: entity)
        } throws: { error in
            (error as? StudioError)?.kind == .conflict && "\(error)".contains("already has the same 'name'")
        }
        // Its own name, a free name, and a nil key (which claims nothing) pass.
        try store.checkUniqueness(of: author, in: entity)
        changed.values[nameSlot] = .string("author 999")
        try store.checkUniqueness(of: changed, in: entity)
        changed.values[nameSlot] = .null
        try store.checkUniqueness(of: changed, in: entity)
    }
}

/// The studio's reads of an SQLite store stay current while other processes write it.
@Suite struct StudioStoreOtherProcessTests {
    /// The `studio-fixture` executable beside the test bundle (the package's build products).
    static let fixtureTool = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        .appendingPathComponent("studio-fixture")

    /// Runs `studio-fixture` with `arguments` and waits for it to end.
    func runFixture(_ arguments: [String]) throws {
        let process = Process()
        process.executableURL = Self.fixtureTool
        process.arguments = arguments
        try process.run()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0, "studio-fixture \(arguments.first ?? "")")
    }

    /// Showing the entity list (its counts) and then another process's save and close once left the
    /// studio's connection on a deleted write-ahead log, so it never saw a later commit.
    @Test func seesEveryCommitOfAnotherProcessAfterShowingTheEntityList() throws {
        try #require(
            FileManager.default.isExecutableFile(atPath: Self.fixtureTool.path),
            "'\(Self.fixtureTool.path)' is missing: build the package's products with the tests")
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("studio-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let url = "sqlite:" + folder.appendingPathComponent("demo.sqlite").path
        try runFixture(["demo", url])
        let store = try StudioStore(url: url)
        defer { store.close() }
        let first = try store.newestTransactionNumber()
        for (step, age) in [99, 77, 55].enumerated() {
            _ = try EntityListPage(store: store, exactCountOf: nil).render()
            try runFixture(["set-age", url, "Ada Lovelace 0", String(age)])
            #expect(try store.newestTransactionNumber() == first + Int64(step) + 1)
        }
        let ages = try store.fetch(StoreQuery(entityName: "Person", filter: .equal("name", .string("Ada Lovelace 0"))))
        #expect(ages.first?["age"] == .int(55))
    }
}

/// Runs `body` with a watch that looks every `interval` at a fresh library store.
func withWatcher(
    interval: Duration = .milliseconds(20), _ body: (LibraryFixture, StudioStore, ChangeWatcher) async throws -> Void
) async throws {
    let fixture = try LibraryFixture()
    defer { fixture.remove() }
    let store = try StudioStore(url: fixture.url)
    defer { store.close() }
    let watcher = ChangeWatcher(store: store, interval: interval)
    defer { watcher.stop() }
    try await body(fixture, store, watcher)
}

/// What a test that found a deadlock leaves alone: releasing it would wait on the deadlocked lock.
private final class KeptForever {
    let value: Any
    init(_ value: Any) { self.value = value }
}

@Suite struct ChangeWatcherTests {
    @Test(.timeLimit(.minutes(1))) func seesAChangeAnotherWriterCommits() async throws {
        try await withWatcher { fixture, store, watcher in
            var numbers = watcher.subscribe().makeAsyncIterator()
            let first = try #require(await numbers.next())
            #expect(first == (try store.newestTransactionNumber()))
            try fixture.setBorn("author 001", 1850)
            var next = first
            while next == first { next = try #require(await numbers.next()) }
            #expect(next == first + 1)
            #expect(try store.history(limit: 1).first?.author == "other")
        }
    }

    /// Subscribers cancelled while the watch hands them numbers. A cancellation runs the stream's
    /// `onTermination` (which takes the watch's lock) under the cancelled task's own lock, and handing a
    /// number to a waiting task takes that task's lock: a watch that handed numbers out under its lock
    /// deadlocked with a cancellation (seen in CI as a studio that never stopped on SIGTERM). The
    /// cancellations come from a thread of their own, so a deadlock fails the test at its deadline.
    @Test func subscribersCancelledWhileTheWatchHandsOutNumbersDoNotDeadlock() throws {
        let fixture = try LibraryFixture()
        defer { fixture.remove() }
        let store = try StudioStore(url: fixture.url)
        defer { store.close() }
        // Every look reads the store and hands out its number: the files changed within the settling time.
        let watcher = ChangeWatcher(store: store, interval: .microseconds(50), settling: .seconds(3600))
        let keeper = watcher.subscribe()  // keeps the watch running between the cancelled subscribers
        let rounds = 3_000
        let finished = DispatchSemaphore(value: 0)
        let progress = Mutex(0)
        let canceller = Thread {
            for round in 1...rounds {
                let waiting = DispatchSemaphore(value: 0)
                let subscriber = Task.detached {
                    for await _ in watcher.subscribe() { waiting.signal() }
                }
                // Cancelled once it got a number, while it waits for the next ones.
                waiting.wait()
                usleep(UInt32.random(in: 0...100))
                subscriber.cancel()
                progress.withLock { $0 = round }
            }
            finished.signal()
        }
        canceller.start()
        guard finished.wait(timeout: .now() + .seconds(60)) == .success else {
            Issue.record("deadlocked after \(progress.withLock { $0 }) of \(rounds) cancelled subscribers")
            // The watch's lock is held for good: stopping the watch or ending the stream would wait on it.
            _ = Unmanaged.passRetained(KeptForever((watcher, keeper)))
            return
        }
        watcher.stop()
        withExtendedLifetime(keeper) {}
    }

    /// After its files changed, the watch reads the history at every look until they have not changed for
    /// `settling` (a commit can become visible after its files' last change), then at each recheck.
    @Test func readsWhileTheFilesSettleAndAtEachRecheck() {
        let now = Date(timeIntervalSince1970: 1_000_000)
        let files = StudioStore.FileSignature(files: ["a.sqlite 10 5.0"], lastModified: now.addingTimeInterval(-1))
        let older = StudioStore.FileSignature(files: ["a.sqlite 8 4.0"], lastModified: now.addingTimeInterval(-9))
        func reason(_ files: StudioStore.FileSignature?, _ previous: StudioStore.FileSignature??, _ sinceRead: Duration)
            -> ChangeWatcher.Reason?
        {
            ChangeWatcher.Reason(
                files: files, previous: previous, sinceRead: sinceRead, settling: .seconds(2), recheck: .seconds(5),
                now: now)
        }
        #expect(reason(files, nil, .zero) == .firstLook)
        #expect(reason(files, .some(older), .milliseconds(150)) == .filesChanged)
        // Unchanged, but modified 1 s ago: read again.
        #expect(reason(files, .some(files), .milliseconds(150)) == .filesSettling)
        // Unchanged for 9 s: no read until the recheck.
        #expect(reason(older, .some(older), .seconds(1)) == nil)
        #expect(reason(older, .some(older), .seconds(5)) == .recheck)
        // A store without files is read at every look.
        #expect(reason(nil, .some(nil), .zero) == .noFiles)
    }
}

@Suite struct ChangeFeedTests {
    /// A feed after the transaction a page was rendered at sends what was committed since at once, before
    /// the watch looks at the store (its first look is an hour away here), oldest first.
    @Test(.timeLimit(.minutes(1))) func sendsWhatWasCommittedBeforeItStartedAtOnce() async throws {
        try await withWatcher(interval: .seconds(3600)) { fixture, store, watcher in
            let rendered = try store.newestTransactionNumber()
            try fixture.setBorn("author 001", 1850)
            try fixture.setBorn("author 002", 1851)
            var feed = ChangeFeed(store: store, watcher: watcher, after: rendered).makeAsyncIterator()
            #expect(try await feed.next() == rendered + 1)
            #expect(try await feed.next() == rendered + 2)
            // A reconnection after the last event it got starts after that one.
            var resumed = ChangeFeed(store: store, watcher: watcher, after: rendered + 1).makeAsyncIterator()
            #expect(try await resumed.next() == rendered + 2)
        }
    }

    /// A change committed after the feed's first read reaches it through the watch.
    @Test(.timeLimit(.minutes(1))) func sendsAChangeCommittedAfterItsFirstRead() async throws {
        try await withWatcher { fixture, store, watcher in
            let rendered = try store.newestTransactionNumber()
            try fixture.setBorn("author 001", 1850)
            var feed = ChangeFeed(store: store, watcher: watcher, after: rendered).makeAsyncIterator()
            // The first read.
            #expect(try await feed.next() == rendered + 1)
            try fixture.setBorn("author 002", 1851)
            #expect(try await feed.next() == rendered + 2)
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
