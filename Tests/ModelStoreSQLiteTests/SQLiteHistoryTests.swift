import CSQLite
import Foundation
import ModelStore
import ModelStoreSQLite
import ModelStoreTestSupport
import Testing

/// A note whose title is unique and kept in tombstones.
final class HistoryNote: PersistentModel {
    @Attribute(.unique, .preserveValueOnDeletion) var title: String = ""
    @Attribute var body: String = ""

    let persistentBackingData = BackingData()
    init() {}
    convenience init(_ title: String, body: String = "") {
        self.init()
        self.title = title
        self.body = body
    }
}

/// The SQLite store's history beyond the conformance cases: shared by every connection to the
/// file, written only by saves that commit, added to files made before history, and trimmed to
/// its limit.
struct SQLiteHistoryTests {
    let folder: TemporaryDirectory
    let url: URL

    init() throws {
        folder = try TemporaryDirectory()
        url = folder.url.appendingPathComponent("notes.sqlite")
    }

    private func container(historyLimit: Int? = 10_000) throws -> ModelContainer {
        var configuration = SQLiteStoreConfiguration(url: url)
        configuration.historyLimit = historyLimit
        return try ModelContainer(for: HistoryNote.self, configurations: configuration)
    }

    private func numbers(_ container: ModelContainer) throws -> [Int64] {
        try ModelContext(container).fetchHistory(HistoryDescriptor<DefaultHistoryTransaction>())
            .map(\.token.transactionNumber)
    }

    @Test func twoContainersOnOneFileShareOneNumberedHistory() throws {
        let first = try container()
        let second = try container()
        let a = ModelContext(first)
        a.author = "first"
        let b = ModelContext(second)
        b.author = "second"
        a.insert(HistoryNote("one"))
        try a.save()
        b.insert(HistoryNote("two"))
        try b.save()
        a.insert(HistoryNote("three"))
        try a.save()

        let seen = try ModelContext(first).fetchHistory(HistoryDescriptor<DefaultHistoryTransaction>())
        #expect(seen.map(\.token.transactionNumber) == [1, 2, 3])
        #expect(seen.map(\.author) == ["first", "second", "first"])
        #expect(try numbers(second) == [1, 2, 3])

        // An update names what changed, and a delete keeps the preserved title.
        let note = try #require(
            try b.fetch(FetchDescriptor<HistoryNote>(predicate: #Predicate { $0.title == "one" })).first)
        note.body = "edited"
        try b.save()
        b.delete(note)
        try b.save()
        let last = try ModelContext(first).fetchHistory(HistoryDescriptor<DefaultHistoryTransaction>()).suffix(2)
        guard case .update(let update as DefaultHistoryUpdate<HistoryNote>)? = last.first?.changes.first,
            case .delete(let delete as DefaultHistoryDelete<HistoryNote>)? = last.last?.changes.first
        else {
            Issue.record("expected an update then a delete, got \(last.map(\.changes))")
            return
        }
        #expect(update.updatedAttributes.names == ["body"])
        #expect(delete.tombstone[\HistoryNote.title] == "one")
    }

    @Test func aTombstoneKeepsTextWithTabsNewlinesAndQuotesExactly() throws {
        let container = try container()
        let context = ModelContext(container)
        let title = "tab\there\nline \"quoted\" \\ café e\u{301}"
        let note = HistoryNote(title)
        context.insert(note)
        try context.save()
        context.delete(note)
        try context.save()
        let last = try #require(
            try ModelContext(container).fetchHistory(HistoryDescriptor<DefaultHistoryTransaction>()).last)
        guard case .delete(let delete as DefaultHistoryDelete<HistoryNote>)? = last.changes.first else {
            Issue.record("expected a delete, got \(last.changes)")
            return
        }
        #expect(delete.tombstone[\HistoryNote.title] == title)
        #expect(
            Array(delete.tombstone[\HistoryNote.title]?.unicodeScalars ?? "".unicodeScalars)
                == Array(title.unicodeScalars))
    }

    @Test func aSaveThatFailsRecordsNothing() throws {
        let container = try container()
        let context = ModelContext(container)
        context.insert(HistoryNote("taken"))
        try context.save()
        let other = ModelContext(container)
        other.duplicateInsertPolicy = .error  // a save the store refuses, not an upsert
        other.insert(HistoryNote("taken"))
        expectError(.uniqueConstraintViolation) { try other.save() }
        #expect(try numbers(container) == [1])
        other.rollback()
        other.insert(HistoryNote("free"))
        try other.save()
        #expect(try numbers(container) == [1, 2])
    }

    @Test func aFileMadeBeforeHistoryGetsItsTableAndKeepsItsData() throws {
        do {
            let container = try container()
            let context = ModelContext(container)
            context.insert(HistoryNote("old"))
            try context.save()
        }
        // Make the file as a version without history left it.
        var handle: OpaquePointer?
        try #require(sqlite3_open(url.path, &handle) == SQLITE_OK)
        RowChecksum.register(on: try #require(handle))
        let dropped = sqlite3_exec(
            handle,
            "DROP TABLE modelstore_history; DELETE FROM modelstore_meta WHERE key LIKE 'history%'; "
                + "UPDATE modelstore_meta SET value = 1 WHERE key = 'format'", nil, nil, nil)
        sqlite3_close(handle)
        try #require(dropped == SQLITE_OK)

        let reopened = try container()
        #expect(try numbers(reopened) == [])
        // The open raised the format: a build without history now refuses the file.
        var check: OpaquePointer?
        try #require(sqlite3_open(url.path, &check) == SQLITE_OK)
        var statement: OpaquePointer?
        sqlite3_prepare_v2(check, "SELECT value FROM modelstore_meta WHERE key = 'format'", -1, &statement, nil)
        #expect(sqlite3_step(statement) == SQLITE_ROW && sqlite3_column_int64(statement, 0) == 4)
        sqlite3_finalize(statement)
        sqlite3_close(check)
        let context = ModelContext(reopened)
        #expect(try context.fetch(FetchDescriptor<HistoryNote>()).map(\.title) == ["old"])
        context.insert(HistoryNote("new"))
        try context.save()
        #expect(try numbers(reopened) == [1])
    }

    @Test func theLimitTrimsTheOldestAndTheirTokensExpire() throws {
        let container = try container(historyLimit: 10)
        let context = ModelContext(container)
        for index in 1...35 {
            context.insert(HistoryNote("n\(index)"))
            try context.save()
            // Never more than the limit, always the newest ones, numbered without a gap.
            let kept = try numbers(container)
            #expect(kept.count <= 10 && kept.last == Int64(index), "after save \(index): \(kept)")
            #expect(kept == Array((kept.first ?? 1)...Int64(index)), "after save \(index): \(kept)")
        }
        let oldest = try #require(try numbers(container).first)
        let expired = DefaultHistoryToken(
            storeIdentifier: try #require(container.stores.first).identifier, transactionNumber: oldest - 2)
        var descriptor = HistoryDescriptor<DefaultHistoryTransaction>()
        descriptor.predicate = #Predicate { $0.token > expired }
        expectError(.historyTokenExpired) { try context.fetchHistory(descriptor) }
        // A token at the newest trimmed transaction still reads everything kept.
        let boundary = DefaultHistoryToken(
            storeIdentifier: try #require(container.stores.first).identifier, transactionNumber: oldest - 1)
        descriptor.predicate = #Predicate { $0.token > boundary }
        #expect(try context.fetchHistory(descriptor).first?.token.transactionNumber == oldest)
    }

    /// A connection keeps the history's state from its own last save (under SQLite's data
    /// version) only until another connection writes: then it reads it again. A stale state would
    /// give a taken number (the save fails) or count changes the other deleted (and trim too much).
    @Test func aConnectionReadsTheHistoryAgainAfterAnotherOneWrites() throws {
        let first = try container(historyLimit: 10)
        let second = try container(historyLimit: 10)
        let a = ModelContext(first)
        let b = ModelContext(second)
        func insert(_ context: ModelContext, _ titles: String...) throws {
            for title in titles { context.insert(HistoryNote(title)) }
            try context.save()
        }
        try insert(a, "a1", "a2", "a3")
        try insert(b, "b1", "b2", "b3")
        try insert(a, "a4", "a5")
        #expect(try numbers(first) == [1, 2, 3])
        // Eight changes kept; the other connection deletes them all.
        try b.deleteHistory(HistoryDescriptor<DefaultHistoryTransaction>())
        try insert(a, "a6", "a7")
        try insert(a, "a8", "a9")
        // Four changes kept, under the limit of ten: nothing trimmed.
        #expect(try numbers(first) == [4, 5])
        #expect(try numbers(second) == [4, 5])
    }

    /// A transaction that the trim would delete at once (it holds more changes than the trim keeps,
    /// nine tenths of the limit) writes no row; one that fits stays. Numbers go on either way, and
    /// the tokens of the deleted rows expire.
    @Test func aTransactionTheTrimWouldDeleteWritesNoRow() throws {
        let container = try container(historyLimit: 10)
        let context = ModelContext(container)
        // Ten changes into an empty history: at the limit, not over it, so the row stays.
        for index in 1...10 { context.insert(HistoryNote("a\(index)")) }
        try context.save()
        #expect(try numbers(container) == [1])
        context.insert(HistoryNote("b"))
        try context.save()
        #expect(try numbers(container) == [2], "the trim keeps nine tenths: one change")
        // Ten changes after one kept: over the limit, and more than the trim keeps.
        for index in 1...10 { context.insert(HistoryNote("c\(index)")) }
        try context.save()
        #expect(try numbers(container).isEmpty)
        let store = try #require(container.stores.first)
        var descriptor = HistoryDescriptor<DefaultHistoryTransaction>()
        let third = DefaultHistoryToken(storeIdentifier: store.identifier, transactionNumber: 2)
        descriptor.predicate = #Predicate { $0.token > third }
        expectError(.historyTokenExpired) { try context.fetchHistory(descriptor) }
        // A bulk insert alone over the limit, then a small save: numbered after both.
        _ = try context.insert(HistoryNote.self, rows: (1...11).map { index in [.set(\.title, to: "d\(index)")] })
        context.insert(HistoryNote("e"))
        try context.save()
        #expect(try numbers(container) == [5])
    }

    @Test func anotherContainersSaveReachesTheWatcher() async throws {
        let watching = try container()
        let other = try container()
        var changes = watching.changes.makeAsyncIterator()
        let watch = watching.watchExternalChanges(every: .milliseconds(20))
        defer { watch.cancel() }
        let theirs = ModelContext(other)
        theirs.author = "importer"
        let note = HistoryNote("shared")
        theirs.insert(note)
        try theirs.save()
        let external = try #require(await changes.next())
        #expect(external.origin == .external)
        #expect(external.insertedIdentifiers == [note.persistentModelID])
        #expect(external.author == "importer")
    }
}
