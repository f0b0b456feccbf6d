import Foundation
import ModelStore
import ModelStoreAdapterKit
import ModelStoreConformance
import Testing

/// A key-value database, as a store sees one: keys with byte values, written a batch at a time
/// (every put and removal of a batch, or none), and able to refuse its next batch as a full disk
/// would.
final class Shelf: @unchecked Sendable {
    // Safety: every stored property is read and written only while `lock` is held.
    private let lock = NSLock()
    private var values: [String: [UInt8]] = [:]
    private var refusals = 0

    /// Makes the next batch throw.
    func refuseNextBatch() { lock.withLock { refusals += 1 } }

    /// Every key and value.
    func contents() -> [String: [UInt8]] { lock.withLock { values } }

    /// Writes `puts` and removes `removals`, all or nothing.
    func write(puts: [String: [UInt8]], removals: [String]) throws {
        try lock.withLock {
            if refusals > 0 {
                refusals -= 1
                throw DataStoreError(.io, "the shelf refused the batch", remedy: "Retry the save")
            }
            for key in removals { values[key] = nil }
            values.merge(puts) { _, new in new }
        }
    }

    /// Changes the bytes of a key (damage, for tests).
    func damage(_ key: String, _ change: (inout [UInt8]) -> Void) { lock.withLock { change(&values[key]!) } }
}

/// The settings of a ``ShelfStore``: the shelf it keeps its models on.
struct ShelfStoreConfiguration: DataStoreConfiguration {
    typealias Store = ShelfStore
    var name = "shelf"
    var schema: Schema?
    /// Where the store keeps its records.
    var shelf: Shelf

    static func == (lhs: Self, rhs: Self) -> Bool { lhs.name == rhs.name && lhs.shelf === rhs.shelf }
    func hash(into hasher: inout Hasher) {
        hasher.combine(name)
        hasher.combine(ObjectIdentifier(shelf))
    }
}

/// A key-value adapter written against the kit's public API only: each model is one key whose value
/// is its ``StoredRow``, encoded with the kit's record codec against a ``ShapeTable`` kept under
/// its own key, and read back through a ``SchemaMapping``, so a store written with an older schema
/// opens with the current one (lightweight migration). Saves are the ``TableWritingStore``
/// defaults over a hook that writes the keys that changed in one batch.
final class ShelfStore: TableWritingStore {
    typealias Snapshot = DefaultSnapshot
    static let shapesKey = "shapes"
    static let identifierKey = "store"
    static let nextKeyKey = "next-key"
    static let rowPrefix = "row/"

    let identifier: String
    let schema: Schema
    let configuration: ShelfStoreConfiguration
    private let context: IdentifierContext
    private let current: LockedValue<(table: SnapshotTable, history: StoreHistory)>
    private let writer = NSLock()

    init(_ configuration: ShelfStoreConfiguration, migrationPlan: (any SchemaMigrationPlan.Type)?) throws {
        guard let schema = configuration.schema else {
            throw DataStoreError(.invalidConfiguration, "the shelf store has no schema", remedy: "Set a schema")
        }
        self.configuration = configuration
        self.schema = schema
        let stored = configuration.shelf.contents()
        identifier = stored[Self.identifierKey].map { String(decoding: $0, as: UTF8.self) } ?? UUID().uuidString
        context = IdentifierContext(storeIdentifier: identifier, shapes: ShapeTable(schema: schema))
        current = LockedValue(
            (try Self.load(stored, identifier: identifier, schema: schema), StoreHistory(limit: 1_000)))
    }

    /// The table the shelf's rows describe, each read with the shapes it was written with.
    private static func load(_ stored: [String: [UInt8]], identifier: String, schema: Schema) throws -> SnapshotTable {
        var table = SnapshotTable(schema: schema)
        guard let shapeBytes = stored[shapesKey] else { return table }
        let shapes = try decode(shapeBytes, key: shapesKey) { try ShapeTable.decode(from: &$0) }
        let context = IdentifierContext(storeIdentifier: identifier, shapes: shapes)
        let mapping = SchemaMapping(shapes: shapes, schema: schema, storeName: "the shelf")
        var snapshots: [DefaultSnapshot] = []
        var nextKey: Int64 =
            try stored[nextKeyKey].map { bytes in try decode(bytes, key: nextKeyKey) { try $0.readSigned() } } ?? 1
        for (key, bytes) in stored where key.hasPrefix(rowPrefix) {
            let row = try decode(bytes, key: key) { try StoredRow.decode(from: &$0, context: context) }
            do {
                snapshots.append(try mapping.snapshot(row))
            } catch let problem as ReplayProblem {
                throw DataStoreError(.corrupted, "the shelf's key '\(key)' \(problem.reason)")
            }
            if case .int(let primaryKey) = row.id.primaryKey { nextKey = max(nextKey, primaryKey + 1) }
        }
        // One run per entity, as the table loads them.
        let order = Dictionary(uniqueKeysWithValues: schema.entities.enumerated().map { ($0.element.name, $0.offset) })
        snapshots.sort { order[$0.entity.name]! < order[$1.entity.name]! }
        try table.load(snapshots)
        table.reserveKeys(below: nextKey)
        return table
    }

    /// Decodes the whole value of `key`, reporting a format error as damage of that key.
    private static func decode<Value>(
        _ bytes: [UInt8], key: String, _ body: (inout ByteReader) throws -> Value
    ) throws -> Value {
        try bytes.withUnsafeBytes { raw in
            var reader = ByteReader(raw)
            do {
                let value = try body(&reader)
                guard reader.isAtEnd else { throw reader.error("\(reader.remaining) bytes follow the value") }
                return value
            } catch let error as FormatError {
                throw DataStoreError(
                    .corrupted, "the shelf's key '\(key)' does not decode at byte \(error.offset): \(error.reason)")
            }
        }
    }

    private static func key(of id: PersistentIdentifier) -> String { "\(rowPrefix)\(id.entityName)/\(id.primaryKey)" }

    func readTable<Result>(_ body: (SnapshotTable) throws -> Result) rethrows -> Result {
        try current.withLock { try body($0.table) }
    }

    func readHistory<Result>(_ body: (StoreHistory) throws -> Result) rethrows -> Result {
        try current.withLock { try body($0.history) }
    }

    func writeTable<Result>(
        _ change: (inout SnapshotTable, inout StoreHistory) throws -> (result: Result, changed: Bool)
    ) throws -> Result {
        try writer.withLock {
            var (table, history) = current.withLock { $0 }
            let before = table
            let (result, changed) = try change(&table, &history)
            guard changed else { return result }
            try configuration.shelf.write(
                puts: puts(from: before, to: table), removals: removals(from: before, to: table))
            current.withLock { $0 = (table, history) }
            return result
        }
    }

    /// The keys to write: the rows that are new or changed, and, with the first batch or after a
    /// schema change, every row, the shape table and the store's identifier.
    private func puts(from before: SnapshotTable, to after: SnapshotTable) throws -> [String: [UInt8]] {
        let stored = configuration.shelf.contents()
        var shapes = ByteWriter()
        try context.shapes.encode(into: &shapes)
        let rewritesAll = stored[Self.shapesKey] != shapes.bytes
        var puts: [String: [UInt8]] = [:]
        // The key counter, so the keys of deleted models are never minted again after a reopen.
        var counter = ByteWriter(capacity: 10)
        counter.writeSigned(after.nextPrimaryKey)
        if stored[Self.nextKeyKey] != counter.bytes { puts[Self.nextKeyKey] = counter.bytes }
        if rewritesAll {
            puts[Self.shapesKey] = shapes.bytes
            puts[Self.identifierKey] = Array(identifier.utf8)
        }
        for entity in schema.entities {
            after.forEachModel(of: entity.name) { id, values in
                // Bit for bit: a change to an equal value (-0.0 for 0.0, another spelling) is a change.
                if !rewritesAll, let old = before.snapshot(for: id)?.values,
                    old.count == values.count, zip(old, values).allSatisfy({ $0.isIdentical(to: $1) })
                {
                    return
                }
                var writer = ByteWriter()
                StoredRow(code: context.shapes.code(of: id.entityName), id: id, values: values)
                    .encode(into: &writer, context: context)
                puts[Self.key(of: id)] = writer.bytes
            }
        }
        return puts
    }

    private func removals(from before: SnapshotTable, to after: SnapshotTable) -> [String] {
        before.allSnapshots.map(\.persistentIdentifier).filter { after.snapshot(for: $0) == nil }.map(Self.key(of:))
    }
}

extension Shelf {
    private static let byDirectory = LockedValue<[URL: Shelf]>([:])

    /// The shelf of a directory, the same one each time, as a database file there would be.
    static func kept(in directory: URL) -> Shelf {
        byDirectory.withLock { shelves in
            if let shelf = shelves[directory.standardizedFileURL] { return shelf }
            let shelf = Shelf()
            shelves[directory.standardizedFileURL] = shelf
            return shelf
        }
    }
}

extension ConformanceAdapter {
    /// A key-value store built on the kit's record codec and table protocols. It declares no
    /// durability: its shelf is not a file, and its history lives in memory only.
    static let shelf = ConformanceAdapter(name: "ShelfStore", capabilities: [.erase]) {
        directory in
        ShelfStoreConfiguration(shelf: Shelf.kept(in: directory))
    }
}

/// The kit's record codec (``ByteWriter``, ``ByteReader``, ``StoredRow``, ``ShapeTable``,
/// ``SchemaMapping``) as a key-value adapter uses it.
struct KeyValueRecordsTests {
    @Test(arguments: ConformanceSuite.cases(for: .shelf))
    func conformance(_ testCase: ConformanceCase) throws {
        switch try testCase.run() {
        case .passed: break
        case .skipped(let reason): try Test.cancel(Comment(rawValue: reason))
        case .expectedFailure(let reason, let failure): withKnownIssue(Comment(rawValue: reason)) { throw failure }
        }
    }

    enum BookV1: VersionedSchema {
        static let versionIdentifier = Schema.Version(1, 0, 0)
        static var models: [any PersistentModel.Type] { [Book.self] }

        final class Book: PersistentModel {
            @Attribute var title: String = ""
            @Attribute var pages: Int = 0
            @Attribute var shelfMark: String = ""
            let persistentBackingData = BackingData()
            init() {}
        }
    }

    /// The book with `pages` renamed, `shelfMark` dropped and `rating` added.
    enum BookV2: VersionedSchema {
        static let versionIdentifier = Schema.Version(2, 0, 0)
        static var models: [any PersistentModel.Type] { [Book.self] }

        final class Book: PersistentModel {
            @Attribute var title: String = ""
            @Attribute var rating: Int = 3
            @Attribute(originalName: "pages") var pageCount: Int = 0
            let persistentBackingData = BackingData()
            init() {}
        }
    }

    private func container(_ schema: any VersionedSchema.Type, _ shelf: Shelf) throws -> ModelContainer {
        try ModelContainer(
            for: Schema(versionedSchema: schema), configurations: [ShelfStoreConfiguration(shelf: shelf)])
    }

    private func fill(_ shelf: Shelf) throws {
        let context = ModelContext(try container(BookV1.self, shelf))
        for (title, pages) in [("Emma", 474), ("Persuasion", 249)] {
            let book = BookV1.Book()
            book.title = title
            book.pages = pages
            book.shelfMark = "A-\(pages)"
            context.insert(book)
        }
        try context.save()
    }

    @Test func eachModelIsOneKeyAndReopensAsItWasSaved() throws {
        let shelf = Shelf()
        try fill(shelf)
        #expect(shelf.contents().keys.filter { $0.hasPrefix(ShelfStore.rowPrefix) }.count == 2)

        let context = ModelContext(try container(BookV1.self, shelf))
        let books = try context.fetch(FetchDescriptor<BookV1.Book>(sortBy: [SortDescriptor(\.title)]))
        #expect(books.map(\.title) == ["Emma", "Persuasion"])
        #expect(books.map(\.shelfMark) == ["A-474", "A-249"])

        // A change writes only its model's key; a delete removes its key.
        let keys = shelf.contents()
        books[0].pages = 475
        context.delete(books[1])
        try context.save()
        let after = shelf.contents()
        let changed = after.keys.filter { after[$0] != keys[$0] }
        #expect(changed.count == 1 && changed[0].hasPrefix(ShelfStore.rowPrefix), "\(changed)")
        #expect(after.count == keys.count - 1)
        let reopened = try ModelContext(try container(BookV1.self, shelf)).fetch(FetchDescriptor<BookV1.Book>())
        #expect(reopened.map(\.pages) == [475])
    }

    @Test func reopenedItKeepsTheKeyCounterAndChangesToEqualValues() throws {
        let shelf = Shelf()
        try fill(shelf)
        let context = ModelContext(try container(BookV1.self, shelf))
        let books = try context.fetch(FetchDescriptor<BookV1.Book>(sortBy: [SortDescriptor(\.title)]))
        let deleted = books[1].persistentModelID
        context.delete(books[1])
        books[0].title = "Emma\u{301}"  // "Emmá" spelled with a combining accent
        try context.save()
        books[0].title = "Emm\u{E1}"  // the same, precomposed: equal by ==, another value
        try context.save()

        let reopened = ModelContext(try container(BookV1.self, shelf))
        let book = BookV1.Book()
        book.title = "Sanditon"
        reopened.insert(book)
        try reopened.save()
        #expect(book.persistentModelID != deleted, "a deleted model's key was minted again")
        let titles = try reopened.fetch(FetchDescriptor<BookV1.Book>()).map(\.title)
        #expect(titles.contains { $0.unicodeScalars.elementsEqual("Emm\u{E1}".unicodeScalars) }, "\(titles)")
    }

    @Test func rowsWrittenWithAnOlderSchemaOpenWithTheCurrentOne() throws {
        let shelf = Shelf()
        try fill(shelf)

        let context = ModelContext(try container(BookV2.self, shelf))
        let books = try context.fetch(FetchDescriptor<BookV2.Book>(sortBy: [SortDescriptor(\.title)]))
        #expect(books.map(\.title) == ["Emma", "Persuasion"])
        #expect(books.map(\.pageCount) == [474, 249])
        #expect(books.map(\.rating) == [3, 3])

        // The first save under the new schema writes every row in its shapes, without the dropped
        // shelf mark (looked for in the rows only: the store's identifier is random text).
        func rowTexts() -> [String] {
            shelf.contents().filter { $0.key.hasPrefix(ShelfStore.rowPrefix) }.map {
                String(decoding: $0.value, as: UTF8.self)
            }
        }
        #expect(rowTexts().contains { $0.contains("A-474") })
        books[0].rating = 5
        try context.save()
        #expect(!rowTexts().contains { $0.contains("A-474") })
        let reopened = try ModelContext(try container(BookV2.self, shelf))
            .fetch(FetchDescriptor<BookV2.Book>(sortBy: [SortDescriptor(\.title)]))
        #expect(reopened.map(\.rating) == [5, 3])
        #expect(reopened.map(\.pageCount) == [474, 249])
    }

    @Test func aRefusedBatchLeavesTheShelfAndTheStoreAsTheyWere() throws {
        let shelf = Shelf()
        try fill(shelf)
        let before = shelf.contents()
        let container = try container(BookV1.self, shelf)
        let context = ModelContext(container)
        let book = BookV1.Book()
        book.title = "Sanditon"
        context.insert(book)
        shelf.refuseNextBatch()
        #expect(throws: DataStoreError.self) { try context.save() }
        #expect(shelf.contents() == before)
        #expect(try ModelContext(container).fetchCount(FetchDescriptor<BookV1.Book>()) == 2)
    }

    @Test func aDamagedRowIsReportedWithItsKey() throws {
        let shelf = Shelf()
        try fill(shelf)
        let key = try #require(shelf.contents().keys.filter { $0.hasPrefix(ShelfStore.rowPrefix) }.sorted().first)
        shelf.damage(key) { $0.removeLast() }
        let error = try #require(throws: DataStoreError.self) { _ = try container(BookV1.self, shelf) }
        #expect(error.code == .corrupted, "\(error)")
        #expect(error.message.contains("'\(key)'") && error.message.contains("does not decode"), "\(error)")

        // A row with a value too many for its shape.
        let other = Shelf()
        try fill(other)
        let rowKey = try #require(other.contents().keys.filter { $0.hasPrefix(ShelfStore.rowPrefix) }.sorted().first)
        let identifier = String(decoding: other.contents()[ShelfStore.identifierKey]!, as: UTF8.self)
        let shapes = ShapeTable(schema: Schema(versionedSchema: BookV1.self))
        let context = IdentifierContext(storeIdentifier: identifier, shapes: shapes)
        let id = try other.contents()[rowKey]!.withUnsafeBytes { raw in
            var reader = ByteReader(raw)
            return try StoredRow.decode(from: &reader, context: context).id
        }
        var writer = ByteWriter()
        StoredRow(code: 0, id: id, values: [.string("x"), .int(1), .string("y"), .int(9)])
            .encode(into: &writer, context: context)
        other.damage(rowKey) { $0 = writer.bytes }
        let mismatch = try #require(throws: DataStoreError.self) { _ = try container(BookV1.self, other) }
        #expect(mismatch.code == .corrupted && mismatch.message.contains("stores 4 values"), "\(mismatch)")
    }
}
