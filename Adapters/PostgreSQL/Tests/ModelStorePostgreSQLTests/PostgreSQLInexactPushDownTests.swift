import Foundation
import ModelStore
import ModelStoreInMemory
import ModelStorePostgreSQL
import Testing

/// The store's answer per condition (exact when SQL runs all of it, inexact when SQL only narrows
/// the rows, unsupported when SQL runs none of it), a window over an inexact condition, and a query
/// a caller sends the store itself, which the store applies exactly whatever its answer.
@Suite(.enabled(if: PostgreSQLServer.isConfigured, PostgreSQLServer.skipMessage))
struct PostgreSQLInexactPushDownTests {
    /// Shelf names in serial order: `"q\u{301}"` starts with `"q"` byte by byte, not in Swift, so a
    /// window SQL applied to what it narrows would start at the wrong shelf.
    static let names = ["q\u{301}", "q\u{301}", "q\u{301}", "Q", "q", "q\u{301}", "qa", "q", "b", "qq", "e\u{301}"]

    /// Whether the shelf of a serial has a keeper.
    static func hasKeeper(_ serial: Int) -> Bool { serial != 7 }

    /// A container on the server (fresh namespace) and one in memory holding ``names`` as shelves,
    /// each but one (``hasKeeper(_:)``) kept by a keeper named like it, each with a book titled like it.
    static func containers() throws -> (server: ModelContainer, memory: ModelContainer) {
        let configuration = try PostgreSQLServer.configuration(namespace: PostgreSQLServer.freshNamespace("inexact"))
        let server = try ModelContainer(for: PostgreSQLPushDownTests.schema, configurations: [configuration])
        let memory = try ModelContainer(
            for: PostgreSQLPushDownTests.schema, configurations: [InMemoryStoreConfiguration()])
        for container in [server, memory] {
            let context = ModelContext(container)
            for (serial, name) in names.enumerated() {
                let shelf = Shelf()
                shelf.serial = serial
                shelf.name = name
                context.insert(shelf)
                if hasKeeper(serial) {
                    let keeper = Keeper()
                    keeper.number = serial
                    keeper.name = name
                    context.insert(keeper)
                    shelf.keeper = keeper
                }
                let book = Book()
                book.title = name
                book.pages = serial * 10
                context.insert(book)
                book.shelf = shelf
            }
            try context.save()
        }
        return (server, memory)
    }

    @Test func theAnswerSaysWhatSQLRuns() throws {
        let (server, _) = try Self.containers()
        let store = try #require(server.stores.first as? PostgreSQLStore)
        let keeperName = StorePath(["keeper", "name"])
        let regex = StoreFilter.text("name", .matchesRegex("^q"))
        let cases: [(StoreFilter, StorePushDown)] = [
            // SQL runs all of it.
            (.compare("name", .equal, .string("q")), .exact),
            (.compare(keeperName, .equal, .string("q")), .exact),
            (.any("books", .compare("pages", .greater, .int(20))), .exact),
            (.or([.compare("rank", .equal, .int(1)), .isIn("name", [.string("q")])]), .exact),
            // SQL narrows: a text search on NFC bytes, or a part of the condition.
            (.text("name", .contains("q")), .inexact),
            (.text("name", .hasPrefix("q")), .inexact),
            (.text(keeperName, .hasPrefix("q")), .inexact),
            (.any("books", .text("title", .contains("a"))), .inexact),
            (.or([.and([.compare("rank", .equal, .int(1)), regex]), .compare("rank", .equal, .int(2))]), .inexact),
            (
                .any("books", .and([.compare("pages", .greater, .int(20)), .text("title", .matchesRegex("a"))])),
                .inexact
            ),
            // SQL runs none of it.
            (regex, .unsupported),
            (.not(.text("name", .contains("q"))), .unsupported),
            (.text(keeperName, .matchesRegex("q")), .unsupported),
            (.all("books", .text("title", .hasPrefix("q"))), .unsupported),
            (.or([regex, .compare("rank", .equal, .int(2))]), .unsupported),
        ]
        for (filter, expected) in cases {
            #expect(store.pushDown(filter, entityName: "Shelf") == expected, "\(filter)")
        }
        // Kept per shape: asked again with other operands, the same answers.
        #expect(store.pushDown(.text("name", .hasPrefix("x")), entityName: "Shelf") == .inexact)
        #expect(store.pushDown(.compare("name", .equal, .string("x")), entityName: "Shelf") == .exact)
    }

    /// A window over an inexact condition is applied by the context after its re-check: the store
    /// receives no offset or limit, and the slice is the one Swift selects.
    @Test func aWindowOverAnInexactConditionIsTheContexts() throws {
        let (server, memory) = try Self.containers()
        let predicates: [(String, Predicate<Shelf>)] = [
            ("name starts with q", #Predicate<Shelf> { $0.name.starts(with: "q") }),
            ("keeper.name starts with q", #Predicate<Shelf> { $0.keeper?.name.starts(with: "q") == true }),
            ("any book title starts with q", #Predicate<Shelf> { $0.books.contains { $0.title.starts(with: "q") } }),
        ]
        for (name, predicate) in predicates {
            var descriptor = FetchDescriptor<Shelf>(predicate: predicate, sortBy: [SortDescriptor(\.serial)])
            descriptor.fetchOffset = 1
            descriptor.fetchLimit = 2
            let explanation = try ModelContext(server).explain(descriptor)
            #expect(explanation.conditions.allSatisfy { $0.isInexact }, "'\(name)': \(explanation)")
            let query = try #require(explanation.storeQuery)
            #expect(query.limit == nil && query.offset == 0, "'\(name)': the store received a window: \(query)")
            #expect(explanation.windowLocation != .store, "'\(name)': \(explanation)")

            let truth = Array(
                Self.names.indices.filter { serial in
                    let startsWithQ = Self.names[serial].starts(with: "q")
                    return name.hasPrefix("keeper") ? Self.hasKeeper(serial) && startsWithQ : startsWithQ
                }.dropFirst().prefix(2))
            #expect(truth.count == 2, "the data should give '\(name)' a full window")
            let found = try ModelContext(server).fetch(descriptor).map(\.serial)
            #expect(found == truth, "'\(name)' on PostgreSQL")
            #expect(try ModelContext(memory).fetch(descriptor).map(\.serial) == truth, "'\(name)' in memory")
            #expect(try ModelContext(server).fetchCount(descriptor) == 2, "count of '\(name)'")
            let context = ModelContext(server)
            let fetchedIDs = try context.fetch(descriptor).map(\.persistentModelID)
            #expect(try context.fetchIdentifiers(descriptor) == fetchedIDs, "identifiers of '\(name)'")
        }
    }

    /// A caller that sends a store query itself (as upsert's lookups and ModelStore Studio do) gets
    /// exactly what it asks for, window included, whatever the store answers the context for it:
    /// the store checks on the rows SQL returns what SQL does not decide (rule 2 of
    /// `DataStoreQuerying`), loading the related rows a condition reads.
    @Test func aQuerySentDirectlyIsAppliedExactly() throws {
        let (server, memory) = try Self.containers()
        let stores: [any DataStore] = [try #require(server.stores.first), try #require(memory.stores.first)]
        let filters: [StoreFilter] = [
            .text("name", .hasPrefix("q")),
            .text("name", .contains("q")),
            .text(StorePath(["keeper", "name"]), .hasPrefix("q")),
            .any("books", .text("title", .hasPrefix("q"))),
            .not(.text("name", .contains("\u{301}"))),
            .all("books", .text("title", .matchesRegex("^q$"))),
            .or([.text(StorePath(["keeper", "name"]), .matchesRegex("^q")), .compare("serial", .equal, .int(3))]),
        ]
        for filter in filters {
            for (offset, limit) in [(0, nil), (1, 2)] as [(Int, Int?)] {
                let query = StoreQuery(
                    entityName: "Shelf", filter: filter, sort: [StoreSortKey(property: "serial")], offset: offset,
                    limit: limit)
                var results: [[Int64]] = []
                var counts: [Int] = []
                for store in stores {
                    let request = DataStoreFetchRequest(
                        descriptor: FetchDescriptor<Shelf>(), editingState: EditingState(), query: query)
                    results.append(
                        try Self.fetch(request, from: store).map { snapshot in
                            guard case .int(let serial)? = snapshot["serial"] else { return -1 }
                            return serial
                        })
                    counts.append(try Self.count(request, in: store))
                }
                #expect(results[0] == results[1], "\(filter), offset \(offset), limit \(limit ?? -1)")
                #expect(counts[0] == results[1].count, "count of \(filter), offset \(offset)")
                #expect(!results[1].isEmpty, "\(filter) selects nothing: the case proves little")
            }
        }
    }

    /// A query that allows inexact matches (as the context's does when it pushes an inexact
    /// condition) gets the rows SQL narrows that condition to, unchecked, and no related rows are
    /// loaded for it; a condition SQL does not narrow is still checked; the context's fetch, which
    /// checks the inexact condition itself, gives Swift's answer, and its explanation shows the
    /// store checks nothing after SQL.
    @Test func aQueryThatAllowsInexactMatchesGetsWhatSQLNarrowsTo() throws {
        let (server, memory) = try Self.containers()
        let store = try #require(server.stores.first as? PostgreSQLStore)
        func serials(_ filter: StoreFilter, allowing: Bool) throws -> [Int64] {
            var query = StoreQuery(entityName: "Shelf", filter: filter, sort: [StoreSortKey(property: "serial")])
            query.allowsInexactMatches = allowing
            let request = DataStoreFetchRequest(
                descriptor: FetchDescriptor<Shelf>(), editingState: EditingState(), query: query)
            return try Self.fetch(request, from: store).map { snapshot in
                guard case .int(let serial)? = snapshot["serial"] else { return -1 }
                return serial
            }
        }
        let swiftPrefixQ = Self.names.indices.filter { Self.names[$0].starts(with: "q") }.map(Int64.init)
        // Byte by byte, "q\u{301}" starts with "q" too (and "Q" does not).
        let bytePrefixQ = Self.names.indices.filter { Self.names[$0].utf8.first == UInt8(ascii: "q") }.map(Int64.init)
        #expect(bytePrefixQ.count > swiftPrefixQ.count, "the data must tell the superset from the matches")
        let prefix = StoreFilter.text("name", .hasPrefix("q"))
        #expect(try serials(prefix, allowing: false) == swiftPrefixQ, "without the flag the store checks")
        #expect(try serials(prefix, allowing: true) == bytePrefixQ, "with it, what SQL narrows to")

        // Through a relationship: the superset by the keeper's name, without loading keepers.
        let keeperPrefix = StoreFilter.text(StorePath(["keeper", "name"]), .hasPrefix("q"))
        let keptBytePrefixQ = bytePrefixQ.filter { Self.hasKeeper(Int($0)) }
        #expect(try serials(keeperPrefix, allowing: true) == keptBytePrefixQ)
        #expect(try serials(keeperPrefix, allowing: false) == swiftPrefixQ.filter { Self.hasKeeper(Int($0)) })

        // A condition SQL does not narrow at all is checked whatever the flag says.
        let regex = StoreFilter.text("name", .matchesRegex("^q$"))
        let onlyQ = Self.names.indices.filter { Self.names[$0] == "q" }.map(Int64.init)
        #expect(try serials(.and([prefix, regex]), allowing: true) == onlyQ)

        // The context pushes the inexact condition with the flag and checks it itself.
        let descriptor = FetchDescriptor<Shelf>(
            predicate: #Predicate { $0.name.starts(with: "q") }, sortBy: [SortDescriptor(\.serial)])
        let explanation = try ModelContext(server).explain(descriptor)
        let pushed = try #require(explanation.storeQuery)
        #expect(pushed.allowsInexactMatches, "\(explanation)")
        let lines = try store.queryPlan(for: pushed)
        #expect(!lines.contains { $0.hasPrefix("then evaluated by the store") }, "\(lines)")
        #expect(
            try store.queryPlan(for: StoreQuery(entityName: "Shelf", filter: prefix)).last?.hasPrefix(
                "then evaluated by the store") == true)
        #expect(try ModelContext(server).fetch(descriptor).map(\.serial) == swiftPrefixQ.map(Int.init))
        #expect(try ModelContext(memory).fetch(descriptor).map(\.serial) == swiftPrefixQ.map(Int.init))
    }

    static func fetch(_ request: DataStoreFetchRequest<Shelf>, from store: any DataStore) throws -> [DefaultSnapshot] {
        func open<S: DataStore>(_ store: S) throws -> [DefaultSnapshot] {
            try store.fetch(request).fetchedSnapshots.map(\.defaultSnapshot)
        }
        return try open(store)
    }

    static func count(_ request: DataStoreFetchRequest<Shelf>, in store: any DataStore) throws -> Int {
        func open<S: DataStore>(_ store: S) throws -> Int { try store.fetchCount(request) }
        return try open(store)
    }
}
