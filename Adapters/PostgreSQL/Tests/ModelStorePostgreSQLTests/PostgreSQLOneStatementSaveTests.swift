import Foundation
import ModelStore
import ModelStorePostgreSQL
import PostgreSQLTestModels
import Testing

/// A save that changes one model is one statement outside a transaction: the row's `UPDATE` at
/// the version and values the context read, the history's number and the history row. These
/// tests check what that statement must keep of the transaction it replaces: a conflict stores
/// nothing and takes no number, the change is recorded under the next number with its running
/// total, also after the history was deleted. (A statement that cannot know the running total
/// sends the save through its transaction instead of storing the row without history:
/// `PostgreSQLHistoryTests.aSaveThatWaitedForTheHistoryCounterCountsTheTransactionCommittedMeanwhile`.)
@Suite(.enabled(if: PostgreSQLServer.isConfigured, PostgreSQLServer.skipMessage))
struct PostgreSQLOneStatementSaveTests {
    typealias Transaction = DefaultHistoryTransaction

    private func container(_ namespace: String) throws -> ModelContainer {
        try ModelContainer(
            for: Counter.schema, configurations: [try PostgreSQLServer.configuration(namespace: namespace)])
    }

    /// The history as stored: `number:changes:cumulative` per row, oldest first.
    private func rows(_ namespace: String, _ admin: AdminConnection) async throws -> [String] {
        try await admin.run(
            "SELECT number::text || ':' || changes::text || ':' || cumulative::text "
                + "FROM \"\(namespace)\".\"modelstore_history\" ORDER BY number")
    }

    @Test func aOneModelSaveRecordsItsChangeUnderTheNextNumberInTheSameStatement() async throws {
        let namespace = PostgreSQLServer.freshNamespace("os")
        let container = try container(namespace)
        let setup = ModelContext(container)
        setup.insert(Counter(name: "a"))
        try setup.save()
        try await AdminConnection.using { admin in
            // The save waits for the history's counter, which another session holds: the statement
            // that waits is the one that checks the values read, writes the row and the history row
            // (the transaction's statements have no value check: they compare after the UPDATE).
            try await admin.run("BEGIN")
            try await admin.run(
                "SELECT value FROM \"\(namespace)\".\"modelstore_meta\" WHERE key = 'historyLast' FOR UPDATE")
            let save = onThread {
                let context = ModelContext(container)
                let counter = try #require(try context.fetch(FetchDescriptor<Counter>()).first)
                counter.value = 1
                try context.save()
            }
            var waiting: [String] = []
            for _ in 0..<1200 where waiting.isEmpty {
                try await Task.sleep(for: .milliseconds(25))
                waiting = try await admin.backendsWaitingForLocks(in: namespace)
            }
            let pid = try #require(waiting.first, "the save never waited for the history counter")
            let alone = try await admin.run(
                "SELECT (position('IS NOT DISTINCT FROM' in query) > 0 AND position('modelstore_history' in query) > 0)::text "
                    + "FROM pg_stat_activity WHERE pid = \(pid)")
            try await admin.run("ROLLBACK")
            try await save.value
            #expect(alone == ["true"], "the one-model save did not run as the one statement")
            #expect(try await rows(namespace, admin) == ["1:1:1", "2:1:2"])
        }
        // Another store on the namespace (as another process) reads the change.
        let other = ModelContext(try self.container(namespace))
        let last = try #require(try other.fetchHistory(HistoryDescriptor<Transaction>()).last)
        #expect(last.token.transactionNumber == 2)
        #expect(last.changes.count == 1)
        let change = try #require(last.changes.first)
        guard case .update(let update) = change, let counterUpdate = update as? DefaultHistoryUpdate<Counter> else {
            Issue.record("the change recorded is \(change), not an update of a counter")
            return
        }
        #expect(counterUpdate.updatedAttributes.names == ["value"])
        #expect(try other.fetch(FetchDescriptor<Counter>()).first?.value == 1)
    }

    @Test func aOneModelSaveOfARowChangedElsewhereIsAConflictThatStoresNothing() async throws {
        let namespace = PostgreSQLServer.freshNamespace("oc")
        let container = try container(namespace)
        let setup = ModelContext(container)
        setup.insert(Counter(name: "a"))
        try setup.save()
        let first = ModelContext(container)
        let second = ModelContext(container)
        let mine = try #require(try first.fetch(FetchDescriptor<Counter>()).first)
        let theirs = try #require(try second.fetch(FetchDescriptor<Counter>()).first)
        mine.value = 1
        try first.save()
        theirs.value = 2
        let error = try #require(throws: DataStoreError.self) { try second.save() }
        #expect(error.code == .conflict)
        #expect(error.entityName == "Counter")
        #expect("\(error)".contains(theirs.persistentModelID.description), "\(error)")
        #expect(try ModelContext(container).fetch(FetchDescriptor<Counter>()).first?.value == 1)
        try await AdminConnection.using { admin in
            #expect(try await rows(namespace, admin) == ["1:1:1", "2:1:2"])
            let last = try await admin.run(
                "SELECT value FROM \"\(namespace)\".\"modelstore_meta\" WHERE key = 'historyLast'")
            #expect(last == ["2"], "the conflicting save took a history number")
        }
        // After a rollback and a fetch the change goes through, under the next number.
        second.rollback()
        let again = try #require(try second.fetch(FetchDescriptor<Counter>()).first)
        again.value = 2
        try second.save()
        #expect(try ModelContext(container).fetch(FetchDescriptor<Counter>()).first?.value == 2)
        try await AdminConnection.using { admin in
            let stored = try await rows(namespace, admin)
            #expect(stored == ["1:1:1", "2:1:2", "3:1:3"])
        }
    }

    @Test func aOneModelSaveAfterTheHistoryWasDeletedStartsItsRunningTotalAgain() async throws {
        let namespace = PostgreSQLServer.freshNamespace("oe")
        let container = try container(namespace)
        let context = ModelContext(container)
        let counter = Counter(name: "a")
        context.insert(counter)
        try context.save()
        // No row precedes the next number: the history was deleted through it, so the statement
        // starts the running total from the (empty) history.
        try context.deleteHistory(HistoryDescriptor<Transaction>())
        counter.value = 3
        try context.save()
        let history = try ModelContext(try self.container(namespace)).fetchHistory(HistoryDescriptor<Transaction>())
        #expect(history.map(\.token.transactionNumber) == [2])
        #expect(history.first?.changes.count == 1)
        try await AdminConnection.using { admin in
            let stored = try await rows(namespace, admin)
            #expect(stored == ["2:1:1"])
        }
        #expect(try ModelContext(container).fetch(FetchDescriptor<Counter>()).first?.value == 3)
    }
}
