import Foundation
import ModelStore
import ModelStorePostgreSQL
import PostgreSQLTestModels
import Testing

/// A save's history written by the namespace's function together with the save's `COMMIT`: created
/// at the open, numbers in commit order across connections (a reader polling for newer numbers
/// misses nothing), a refused history row stores nothing of the save, a save that waited for the
/// counter counts the transaction committed meanwhile, and without the function the save records
/// with separate statements.
@Suite(.enabled(if: PostgreSQLServer.isConfigured, PostgreSQLServer.skipMessage), .serialized)
struct PostgreSQLRecordFunctionTests {
    typealias Transaction = DefaultHistoryTransaction

    static let function = "modelstore_record_history_1"

    /// A folder that notes refer to (a to-one relationship without an inverse, so a note's save
    /// writes only the note's row, and the namespace has deferred foreign keys).
    final class Folder: PersistentModel {
        @Attribute var title: String = ""
        let persistentBackingData = BackingData()
        init() {}
    }

    /// A note in a folder.
    final class Note: PersistentModel {
        @Attribute(.unique) var name: String = ""
        @Relationship var folder: Folder?
        let persistentBackingData = BackingData()
        init() {}
    }

    private func container(_ namespace: String, notes: Bool = false) throws -> ModelContainer {
        var configuration = try PostgreSQLServer.configuration(namespace: namespace)
        configuration.historyLimit = 10_000
        // One connection a container (each runs one save or read at a time): the server's connection
        // slots are shared by every suite running beside this one.
        configuration.maximumConnections = 1
        let schema = notes ? Schema([Note.self, Folder.self]) : Counter.schema
        return try ModelContainer(for: schema, configurations: [configuration])
    }

    /// Closes the containers' connections: the run keeps containers alive past their tests, and the
    /// server's connection slots are shared by every suite running beside this one.
    private func close(_ containers: [ModelContainer]) {
        for container in containers { (container.stores.first as? PostgreSQLStore)?.close() }
    }

    private func numbers(_ container: ModelContainer) throws -> [Int64] {
        try ModelContext(container).fetchHistory(HistoryDescriptor<Transaction>()).map(\.token.transactionNumber)
    }

    private func names(_ container: ModelContainer) throws -> [String] {
        try ModelContext(container).fetch(FetchDescriptor<Counter>(sortBy: [SortDescriptor(\.name)])).map(\.name)
    }

    /// How many functions of that name the namespace has.
    private func functions(in namespace: String, _ admin: AdminConnection) async throws -> Int {
        let rows = try await admin.run(
            "SELECT count(*)::text FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace "
                + "WHERE n.nspname = '\(namespace)' AND p.proname = '\(Self.function)'")
        return Int(rows.first ?? "") ?? -1
    }

    /// Each row's number, change count and running total, as `number:changes:cumulative`.
    private func historyRows(in namespace: String, _ admin: AdminConnection) async throws -> [String] {
        try await admin.run(
            "SELECT number::text || ':' || changes::text || ':' || cumulative::text FROM "
                + "\"\(namespace)\".\"modelstore_history\" ORDER BY number")
    }

    /// Three writers, each with a container of its own (its own connections, as three processes), save
    /// one new model at a time while a reader polls for the transactions after the newest it saw:
    /// the reader sees every number from 1 up exactly once and in order (a transaction committed
    /// after a larger number was read would be skipped), every model is there, inserted by exactly
    /// one transaction, and the running totals add up. With notes, the namespace has deferred
    /// foreign keys, which the function checks before it takes the number.
    @Test(arguments: [false, true])
    func concurrentSavesReachAPollingReaderInCommitOrderAndLoseNothing(notes: Bool) async throws {
        let namespace = PostgreSQLServer.freshNamespace("rfc")
        let reader = try container(namespace, notes: notes)
        var folder: PersistentIdentifier?
        if notes {
            let context = ModelContext(reader)
            let shared = Folder()
            shared.title = "shared"
            context.insert(shared)
            try context.save()
            folder = shared.persistentModelID
        }
        let (writers, saves) = (3, 20)
        let containers = try (0..<writers).map { _ in try container(namespace, notes: notes) }
        defer { close(containers + [reader]) }
        let finished = LockedValue(false)
        let seen = LockedValue<[Int64]>([])
        let watcher = onThread {
            let context = ModelContext(reader)
            var newest: DefaultHistoryToken?
            while true {
                let last = finished.withLock { $0 }
                let descriptor =
                    newest.map { token in HistoryDescriptor<Transaction>(predicate: #Predicate { $0.token > token }) }
                    ?? HistoryDescriptor<Transaction>()
                let found = try context.fetchHistory(descriptor)
                seen.withLock { $0 += found.map(\.token.transactionNumber) }
                newest = found.last?.token ?? newest
                if last { return }
                Thread.sleep(forTimeInterval: 0.005)
            }
        }
        let savers = containers.enumerated().map { index, container in
            onThread {
                let context = ModelContext(container)
                // The shared folder (the only one), as this writer's context reads it.
                let target = notes ? try context.fetch(FetchDescriptor<Folder>()).first : nil
                for save in 0..<saves {
                    if notes {
                        let note = Note()
                        note.name = "w\(index)-\(save)"
                        note.folder = target
                        context.insert(note)
                    } else {
                        context.insert(Counter(name: "w\(index)-\(save)"))
                    }
                    try context.save()
                }
            }
        }
        for saver in savers { try await saver.value }
        finished.withLock { $0 = true }
        try await watcher.value

        let first: Int64 = notes ? 2 : 1
        let expected = Array(first...Int64(writers * saves + Int(first) - 1))
        #expect(seen.withLock { $0 }.filter { $0 >= first } == expected)
        let context = ModelContext(reader)
        let history = try context.fetchHistory(HistoryDescriptor<Transaction>()).filter {
            $0.token.transactionNumber >= first
        }
        let inserted = history.flatMap { $0.changes.map(\.changedPersistentIdentifier) }
        let stored =
            notes
            ? try context.fetchIdentifiers(FetchDescriptor<Note>())
            : try context.fetchIdentifiers(FetchDescriptor<Counter>())
        #expect(inserted.count == writers * saves)
        #expect(Set(inserted) == Set(stored))
        if notes {
            let linked = try context.fetch(FetchDescriptor<Note>()).filter { $0.folder?.persistentModelID == folder }
            #expect(linked.count == writers * saves)
        }
        try await AdminConnection.using { admin in
            let rows = try await historyRows(in: namespace, admin)
            let totals = (1...rows.count).map { "\($0):1:\($0)" }
            #expect(rows == totals)
        }
    }

    /// A history row the table refuses (a check constraint added for the test) fails the save's
    /// last statement: nothing of the save is stored, and its number is not used up.
    @Test func aRefusedHistoryRowStoresNothingOfTheSaveAndTakesNoNumber() async throws {
        let namespace = PostgreSQLServer.freshNamespace("rfr")
        let container = try container(namespace)
        defer { close([container]) }
        let context = ModelContext(container)
        context.insert(Counter(name: "a"))
        try context.save()
        let history = "\"\(namespace)\".\"modelstore_history\""
        try await AdminConnection.using { admin in
            #expect(try await functions(in: namespace, admin) == 1)
            try await admin.run("ALTER TABLE \(history) ADD CONSTRAINT refuse_second CHECK (number < 2) NOT VALID")
        }
        let failing = ModelContext(container)
        failing.insert(Counter(name: "b"))
        failing.insert(Counter(name: "c"))
        #expect(throws: DataStoreError.self) { try failing.save() }
        #expect(try names(container) == ["a"])
        #expect(try numbers(container) == [1])

        try await AdminConnection.using { admin in
            try await admin.run("ALTER TABLE \(history) DROP CONSTRAINT refuse_second")
        }
        let again = ModelContext(container)
        again.insert(Counter(name: "b"))
        try again.save()
        #expect(try names(container) == ["a", "b"])
        #expect(try numbers(container) == [1, 2])
    }

    /// The save's last statement is the call of the function: a function that fails (replaced for
    /// the test) fails the save with its message, and nothing of the save is stored.
    @Test func aSaveEndsWithTheFunctionAndItsFailureStoresNothing() async throws {
        let namespace = PostgreSQLServer.freshNamespace("rff")
        let container = try container(namespace)
        defer { close([container]) }
        let context = ModelContext(container)
        context.insert(Counter(name: "a"))
        try context.save()
        try await AdminConnection.using { admin in
            try await admin.run(
                "CREATE OR REPLACE FUNCTION \"\(namespace)\".\(Self.function)(immediate boolean, change_count bigint, "
                    + "committed_at double precision, author_name text, body_text text, history_limit bigint, "
                    + "OUT taken bigint, OUT transaction_id bigint) LANGUAGE plpgsql AS "
                    + "$$ BEGIN RAISE EXCEPTION 'refused by the test'; END $$")
        }
        let failing = ModelContext(container)
        failing.insert(Counter(name: "b"))
        do {
            try failing.save()
            Issue.record("the save succeeded although the function it ends with failed")
        } catch let error as DataStoreError {
            #expect("\(error)".contains("refused by the test"), "\(error)")
        }
        #expect(try names(container) == ["a"])
        #expect(try numbers(container) == [1])
    }

    /// Another writer holds the counter (number 3) while a save of a new model starts, then commits
    /// its history row: the save records number 4 with the running total that includes it.
    @Test func aSaveThatWaitedForTheCounterCountsTheTransactionCommittedMeanwhile() async throws {
        let namespace = PostgreSQLServer.freshNamespace("rfw")
        let container = try container(namespace)
        defer { close([container]) }
        let context = ModelContext(container)
        context.insert(Counter(name: "a"))
        try context.save()
        context.insert(Counter(name: "b"))
        try context.save()
        let meta = "\"\(namespace)\".\"modelstore_meta\""
        let history = "\"\(namespace)\".\"modelstore_history\""
        try await AdminConnection.using { admin in
            try await admin.run("BEGIN")
            try await admin.run("UPDATE \(meta) SET value = (value::bigint + 1)::text WHERE key = 'historyLast'")
            try await admin.run(
                "INSERT INTO \(history) (number, changes, cumulative, committed, author, body) SELECT 3, 2, "
                    + "cumulative + 2, 0, 'another', '[]' FROM \(history) WHERE number = 2")
            let save = onThread {
                let context = ModelContext(container)
                context.insert(Counter(name: "c"))
                try context.save()
            }
            let waiting = try await admin.awaitBackendsWaitingForLocks(in: namespace)
            #expect(!waiting.isEmpty, "the save never waited for the history counter")
            try await admin.run("COMMIT")
            try await save.value
            #expect(try await historyRows(in: namespace, admin) == ["1:1:1", "2:1:2", "3:2:4", "4:1:5"])
        }
        #expect(try names(container) == ["a", "b", "c"])
    }

    /// The save's connection ends while its last statement waits for the counter, so the `COMMIT`
    /// written after it was never sent: the save fails with `.io`, stores nothing and takes no
    /// number, and the next save (on a new connection) goes through.
    @Test func aConnectionEndedBeforeTheCallsAnswerFailsTheSaveAndStoresNothing() async throws {
        let namespace = PostgreSQLServer.freshNamespace("rfe")
        let container = try container(namespace)
        defer { close([container]) }
        let context = ModelContext(container)
        context.insert(Counter(name: "a"))
        try context.save()
        let meta = "\"\(namespace)\".\"modelstore_meta\""
        try await AdminConnection.using { admin in
            try await admin.run("BEGIN")
            try await admin.run("SELECT value FROM \(meta) WHERE key = 'historyLast' FOR UPDATE")
            let save = onThread {
                let context = ModelContext(container)
                context.insert(Counter(name: "b"))
                try context.save()
            }
            let pid = try #require(
                try await admin.awaitBackendsWaitingForLocks(in: namespace).first,
                "the save never waited for the history counter")
            try await admin.run("SELECT pg_terminate_backend(\(pid))::text")
            try await admin.run("ROLLBACK")
            let error = await #expect(throws: DataStoreError.self) { try await save.value }
            #expect(error?.code == .io)
        }
        #expect(try names(container) == ["a"])
        #expect(try numbers(container) == [1])
        let again = ModelContext(container)
        again.insert(Counter(name: "c"))
        try again.save()
        #expect(try names(container) == ["a", "c"])
        #expect(try numbers(container) == [1, 2])
    }

    /// A namespace whose function was dropped after the open (by an administrator, or a build
    /// that did not have it): the next save records with separate statements, and the next open
    /// creates the function again.
    @Test func withoutTheFunctionASaveRecordsWithStatementsAndTheNextOpenCreatesIt() async throws {
        let namespace = PostgreSQLServer.freshNamespace("rfd")
        let container = try container(namespace)
        defer { close([container]) }
        let context = ModelContext(container)
        context.insert(Counter(name: "a"))
        try context.save()
        try await AdminConnection.using { admin in
            try await admin.run("DROP FUNCTION \"\(namespace)\".\(Self.function)")
        }
        context.insert(Counter(name: "b"))
        try context.save()
        context.insert(Counter(name: "c"))
        try context.save()
        #expect(try names(container) == ["a", "b", "c"])
        #expect(try numbers(container) == [1, 2, 3])
        try await AdminConnection.using { admin in
            #expect(try await historyRows(in: namespace, admin) == ["1:1:1", "2:1:2", "3:1:3"])
            #expect(try await functions(in: namespace, admin) == 0)
            close([try self.container(namespace)])
            #expect(try await functions(in: namespace, admin) == 1)
        }
    }
}
