import Foundation
import ModelStore
import ModelStoreSQLite
import ModelStoreTestSupport
import Testing

/// A reading of every kind of plain attribute SQLite keeps in a column.
final class Reading: PersistentModel {
    @Attribute(.unique) var name: String = ""
    @Attribute var note: String? = nil
    @Attribute var taken: Date = .distantPast
    @Attribute var value: Double = 0
    @Attribute var count: Int = 0
    @Attribute var flag: Bool = false
    @Attribute var tag: UUID = UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))
    @Attribute var blob: Data = Data()
    @Attribute var link: URL? = nil

    let persistentBackingData = BackingData()
    init() {}

    /// Reading `index`, with a value of each kind that tests an edge: `nil`, `-0.0`, `Int.min`,
    /// empty and non-ASCII text, empty data.
    convenience init(_ index: Int) {
        self.init()
        name = "reading-\(index)"
        note = index % 3 == 0 ? nil : "note \(index) é"
        taken = Date(timeIntervalSinceReferenceDate: Double(index) * 86_400.25)
        value = index % 5 == 0 ? -0.0 : Double(index) / 7
        count = index % 2 == 0 ? Int.min + index : index
        flag = index % 2 == 1
        tag = UUID(uuid: (UInt8(index % 256), 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15))
        blob = Data((0..<(index % 40)).map { UInt8(truncatingIfNeeded: $0 &* index) })
        link = index % 4 == 0 ? nil : URL(string: "https://example.com/r/\(index)")
    }

    /// Reading `index` as the row of a batch insert.
    static func assignments(_ index: Int) -> [BatchAssignment<Reading>] {
        let reading = Reading(index)
        return [
            .set(\.name, to: reading.name), .set(\.note, to: reading.note), .set(\.taken, to: reading.taken),
            .set(\.value, to: reading.value), .set(\.count, to: reading.count), .set(\.flag, to: reading.flag),
            .set(\.tag, to: reading.tag), .set(\.blob, to: reading.blob), .set(\.link, to: reading.link),
        ]
    }

    /// Every value, for comparing two readings.
    var row: String {
        "\(name)|\(note ?? "nil")|\(taken.timeIntervalSinceReferenceDate)|\(value.bitPattern)|\(count)|\(flag)|"
            + "\(tag)|\(blob.base64EncodedString())|\(link?.absoluteString ?? "nil")"
    }
}

/// SQLite writes a batch insert made from values (`ModelContext.insert(_:rows:)`) from the values
/// themselves: what it stores, the identifiers it returns and what a failure leaves must be those of
/// the same models saved one by one.
struct SQLiteRowInsertTests {
    static let count = 20_000

    static func container(_ url: URL) throws -> ModelContainer {
        try ModelContainer(for: Reading.self, configurations: SQLiteStoreConfiguration(url: url))
    }

    @Test func rowsAreStoredAsTheSameModelsSavedAreAndComeBackInOrder() throws {
        let directory = try TemporaryDirectory()
        let saved = ModelContext(try Self.container(directory.file("saved.sqlite")))
        for index in 0..<1_000 { saved.insert(Reading(index)) }
        try saved.save()

        let url = directory.file("rows.sqlite")
        let container = try Self.container(url)
        let ids = Array(try ModelContext(container).insert(Reading.self, rows: (0..<1_000).map(Reading.assignments)))
        #expect(ids.map(\.primaryKey.intValue) == (1...1_000).map { Int64($0) })
        ToolLibrary.close(container)

        let reopened = ModelContext(try Self.container(url))
        let rows = try reopened.fetch(FetchDescriptor<Reading>(sortBy: [SortDescriptor(\.name)]))
        let models = try saved.fetch(FetchDescriptor<Reading>(sortBy: [SortDescriptor(\.name)]))
        #expect(rows.count == 1_000)
        #expect(rows.map(\.row) == models.map(\.row))
        #expect(
            rows.map(\.persistentModelID).sorted { ($0.primaryKey.intValue ?? 0) < ($1.primaryKey.intValue ?? 0) }
                == ids)
        #expect(try reopened.fetchHistory(HistoryDescriptor<DefaultHistoryTransaction>()).count == 1)
    }

    @Test func aDuplicateInALaterChunkLeavesTheStoreAsItWas() throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("rows.sqlite")
        let container = try Self.container(url)
        let context = ModelContext(container)
        try context.insert(Reading.self, rows: [Reading.assignments(15_000)])
        let history = try context.fetchHistory(HistoryDescriptor<DefaultHistoryTransaction>()).map(\.token)

        // The stored name comes again in the second chunk of the batch.
        let error = try #require(throws: DataStoreError.self) {
            try context.insert(Reading.self, rows: (0..<Self.count).lazy.map(Reading.assignments))
        }
        #expect(error.code == .uniqueConstraintViolation, "\(error)")
        #expect(error.entityName == "Reading" && error.propertyNames == ["name"], "\(error)")
        #expect(error.conflictingValues == [.string("reading-15000")], "\(error)")
        #expect(try ModelContext(container).fetchCount(FetchDescriptor<Reading>()) == 1)
        #expect(try context.fetchHistory(HistoryDescriptor<DefaultHistoryTransaction>()).map(\.token) == history)

        // The failed batch took no key: the next one continues from the first.
        let ids = Array(try context.insert(Reading.self, rows: (0..<3).map(Reading.assignments)))
        #expect(ids.map(\.primaryKey.intValue) == [2, 3, 4])
    }
}
