import Foundation
import ModelStore
import ModelStorePostgreSQL
import PostgreSQLTestModels
import Testing

/// The PostgreSQL store's history beyond the conformance cases: failed saves record nothing,
/// trimming to the limit, an erase expiring every token, and random sequences of saves, batch
/// operations and history deletes checked against a plain-Swift model of the history.
@Suite(.enabled(if: PostgreSQLServer.isConfigured, PostgreSQLServer.skipMessage))
struct PostgreSQLHistoryTests {
    typealias Transaction = DefaultHistoryTransaction

    private func container(_ namespace: String, historyLimit: Int? = 10_000) throws -> ModelContainer {
        var configuration = try PostgreSQLServer.configuration(namespace: namespace)
        configuration.historyLimit = historyLimit
        return try ModelContainer(for: Counter.schema, configurations: [configuration])
    }

    private func numbers(_ context: ModelContext) throws -> [Int64] {
        try context.fetchHistory(HistoryDescriptor<Transaction>()).map(\.token.transactionNumber)
    }

    /// Expects a fetch of the transactions after `token` to fail with `historyTokenExpired`.
    private func expectExpired(_ context: ModelContext, after token: DefaultHistoryToken) throws {
        do {
            let found = try context.fetchHistory(
                HistoryDescriptor<Transaction>(predicate: #Predicate { $0.token > token }))
            Issue.record("a token into deleted history fetched \(found.count) transactions instead of failing")
        } catch let error as DataStoreError {
            #expect(error.code == .historyTokenExpired, "\(error)")
        }
    }

    @Test func aFailedSaveRecordsNoHistoryAndTakesNoNumber() throws {
        let container = try container(PostgreSQLServer.freshNamespace("hf"))
        let context = ModelContext(container)
        let first = Counter(name: "a")
        context.insert(first)
        try context.save()
        #expect(try numbers(context) == [1])

        // A unique index refuses the second "a": the save fails after writing rows.
        let duplicate = ModelContext(container)
        duplicate.duplicateInsertPolicy = .error  // the index's refusal, not an upsert
        duplicate.insert(Counter(name: "a"))
        #expect(throws: DataStoreError.self) { try duplicate.save() }
        #expect(try numbers(context) == [1], "a save the unique index refused recorded history")

        // A conflict: another context changed the row since this one read it.
        let stale = ModelContext(container)
        let staleCounter = try #require(try stale.fetch(FetchDescriptor<Counter>()).first)
        first.value = 5
        try context.save()
        staleCounter.value = 7
        #expect(throws: DataStoreError.self) { try stale.save() }
        #expect(try numbers(context) == [1, 2], "a save that failed with a conflict recorded history")

        // The next save takes the next number: the failed ones left no gap.
        context.insert(Counter(name: "b"))
        try context.save()
        #expect(try numbers(context) == [1, 2, 3])
    }

    @Test func historyIsTrimmedToNineTenthsOfItsLimitAndOldTokensExpire() throws {
        let container = try container(PostgreSQLServer.freshNamespace("ht"), historyLimit: 10)
        let context = ModelContext(container)
        let counter = Counter(name: "trimmed")
        context.insert(counter)
        try context.save()
        for value in 1...14 {
            counter.value = value
            try context.save()
        }
        // 15 one-change transactions: the 11th went past 10 changes and trimmed to 9 (3…11), the
        // next ones grew it back to 10 (3…12), past it again at 13 (trimmed to 7…15 would be 9).
        var kept: [Int64] = []
        for number in Int64(1)...15 {
            kept.append(number)
            if kept.count > 10 { kept.removeFirst(kept.count - 9) }
        }
        #expect(try numbers(context) == kept)
        let expiredToken = DefaultHistoryToken(
            storeIdentifier: try #require(counter.persistentModelID.storeIdentifier), transactionNumber: 1)
        try expectExpired(context, after: expiredToken)
    }

    @Test func deletingEveryModelRecordsEveryDeletionInOneTransaction() throws {
        let container = try container(PostgreSQLServer.freshNamespace("hd"))
        let context = ModelContext(container)
        for index in 0..<30 { context.insert(Counter(name: "d\(index)")) }
        try context.save()
        let ids = try context.fetchIdentifiers(FetchDescriptor<Counter>())
        try context.delete(model: Counter.self)
        let history = try context.fetchHistory(HistoryDescriptor<Transaction>())
        #expect(history.map(\.token.transactionNumber) == [1, 2])
        let deletions = try #require(history.last).changes
        #expect(deletions.count == 30)
        #expect(Set(deletions.map(\.changedPersistentIdentifier)) == Set(ids))
        #expect(deletions.allSatisfy { if case .delete = $0 { true } else { false } })
        // Nothing is left to delete: the next delete of every model records nothing.
        try context.delete(model: Counter.self)
        #expect(try numbers(context) == [1, 2])
    }

    @Test func aSaveThatWaitedForTheHistoryCounterCountsTheTransactionCommittedMeanwhile() async throws {
        let namespace = PostgreSQLServer.freshNamespace("hw")
        let container = try container(namespace)
        let context = ModelContext(container)
        let counter = Counter(name: "w")
        context.insert(counter)
        try context.save()
        counter.value = 1
        try context.save()
        let key = try #require(counter.persistentModelID.primaryKey.intValue)
        try await AdminConnection.using { admin in
            try await waitedForTheCounter(namespace: namespace, key: key, container: container, admin: admin)
        }
    }

    /// Another writer takes number 3 and holds the counter while a save of one changed model starts,
    /// then commits its history row: the save's statement began before that row existed, yet the
    /// save records number 4 with the running total that includes it.
    private func waitedForTheCounter(
        namespace: String, key: Int64, container: ModelContainer, admin: AdminConnection
    ) async throws {
        let meta = "\"\(namespace)\".\"modelstore_meta\""
        let history = "\"\(namespace)\".\"modelstore_history\""
        try await admin.run("BEGIN")
        try await admin.run("UPDATE \(meta) SET value = (value::bigint + 1)::text WHERE key = 'historyLast'")
        try await admin.run(
            "INSERT INTO \(history) (number, changes, cumulative, committed, author, body) SELECT 3, 1, "
                + "cumulative + 1, 0, 'another', '[{\"k\":\"u\",\"e\":\"Counter\",\"p\":\(key),\"u\":[\"value\"]}]' "
                + "FROM \(history) WHERE number = 2")
        let save = onThread {
            let context = ModelContext(container)
            let counter = try #require(try context.fetch(FetchDescriptor<Counter>()).first)
            counter.value = 2
            try context.save()
        }
        let waiting = try await admin.awaitBackendsWaitingForLocks(in: namespace)
        #expect(!waiting.isEmpty, "the save never waited for the history counter")
        try await admin.run("COMMIT")
        try await save.value
        let rows = try await admin.run(
            "SELECT number::text || ':' || changes::text || ':' || cumulative::text FROM \(history) ORDER BY number")
        #expect(rows == ["1:1:1", "2:1:2", "3:1:3", "4:1:4"])
        let context = ModelContext(container)
        let last = try #require(try context.fetchHistory(HistoryDescriptor<Transaction>()).last)
        #expect(last.token.transactionNumber == 4)
        #expect(last.changes.count == 1)
    }

    @Test func anEraseDeletesTheHistoryAndExpiresTheNewestToken() throws {
        let container = try container(PostgreSQLServer.freshNamespace("he"))
        let context = ModelContext(container)
        context.insert(Counter(name: "erased"))
        try context.save()
        let newest = try #require(try context.fetchHistory(HistoryDescriptor<Transaction>()).last?.token)
        try container.erase()
        #expect(try numbers(context).isEmpty)
        // A watcher that read up to `newest` must learn that everything may have changed.
        try expectExpired(context, after: newest)
        context.insert(Counter(name: "after"))
        try context.save()
        #expect(try numbers(context) == [3], "the erase did not use up a number, or the numbers restarted")
    }

    /// One transaction as the model expects it: its number, author and changes by kind.
    private struct Expected: Equatable, CustomStringConvertible {
        var number: Int64
        var author: String?
        var inserted: Set<String> = []
        var updated: Set<String> = []
        var deleted: Set<String> = []
        var description: String {
            "#\(number) \(author ?? "-") +\(inserted.sorted()) ~\(updated.sorted()) -\(deleted.sorted())"
        }
    }

    private func observed(_ transaction: Transaction, names: [PersistentIdentifier: String]) -> Expected {
        var result = Expected(number: transaction.token.transactionNumber, author: transaction.author)
        for change in transaction.changes {
            let name = names[change.changedPersistentIdentifier] ?? "?"
            switch change {
            case .insert: result.inserted.insert(name)
            case .update: result.updated.insert(name)
            case .delete: result.deleted.insert(name)
            }
        }
        return result
    }

    /// Random saves, batch updates and history deletes, from a seed; after each step the store's
    /// history must equal the model's. A failure names the seed and the step.
    @Test(arguments: [11, 12, 13] as [UInt64])
    func randomOperationsRecordTheHistoryTheModelExpects(seed: UInt64) throws {
        var random = SplitMix(seed: seed)
        let container = try container(PostgreSQLServer.freshNamespace("hr"), historyLimit: nil)
        var values: [String: Int] = [:]
        var names: [PersistentIdentifier: String] = [:]
        var model: [Expected] = []
        var tokens: [Int64: DefaultHistoryToken] = [:]
        var created = 0
        var last: Int64 = 0  // the newest number given: deleting history does not lower it
        for step in 0..<30 {
            // A context per step, so every step starts from the rows as they are.
            let context = ModelContext(container)
            let author = ["alpha", "beta", nil][Int(random.next() % 3)]
            context.author = author
            var live: [String: Counter] = [:]
            for counter in try context.fetch(FetchDescriptor<Counter>()) { live[counter.name] = counter }
            var expected = Expected(number: last + 1, author: author)
            switch random.next() % 5 {
            case 0, 1:
                for name in values.keys.sorted() where random.next() % 4 == 0 {
                    values[name]! += 1
                    live[name]!.value = values[name]!
                    expected.updated.insert(name)
                }
                var inserted: [Counter] = []
                for _ in 0..<(1 + Int(random.next() % 3)) {
                    created += 1
                    let counter = Counter(name: "n\(created)")
                    context.insert(counter)
                    inserted.append(counter)
                    values[counter.name] = 0
                    expected.inserted.insert(counter.name)
                }
                try context.save()
                for counter in inserted { names[counter.persistentModelID] = counter.name }
            case 2:
                for name in values.keys.sorted() where random.next() % 3 == 0 {
                    context.delete(live[name]!)
                    values[name] = nil
                    expected.deleted.insert(name)
                }
                try context.save()
            case 3:
                let chosen = values.keys.sorted().filter { _ in random.next() % 2 == 0 }
                let set = try context.update(
                    Counter.self, where: #Predicate { chosen.contains($0.name) }, set: [.set(\.value, to: 99)])
                #expect(set == chosen.count, "seed \(seed), step \(step): the batch update set the wrong count")
                for name in chosen where values[name] != 99 {
                    expected.updated.insert(name)
                    values[name] = 99
                }
            default:
                guard !model.isEmpty else { continue }
                let through = model[Int(random.next() % UInt64(model.count))].number
                let token = try #require(tokens[through])
                try context.deleteHistory(HistoryDescriptor<Transaction>(predicate: #Predicate { $0.token <= token }))
                model.removeAll { $0.number <= through }
            }
            if !(expected.inserted.isEmpty && expected.updated.isEmpty && expected.deleted.isEmpty) {
                model.append(expected)
                last = expected.number
            }
            let transactions = try context.fetchHistory(HistoryDescriptor<Transaction>())
            for transaction in transactions { tokens[transaction.token.transactionNumber] = transaction.token }
            let history = transactions.map { observed($0, names: names) }
            #expect(history == model, "seed \(seed), step \(step)")
            if history != model { return }
        }
    }
}
