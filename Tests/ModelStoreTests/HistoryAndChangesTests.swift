import Foundation
import ModelStore
import ModelStoreAdapterKit
import ModelStoreInMemory
import ModelStoreTestSupport
import Testing

/// The container's change events, and the core's side of history: limits, expiry, several stores.
struct ContainerChangesTests {
    @Test func everySaveBatchAndEraseIsOneEvent() async throws {
        let container = try ModelContainer(for: Trip.self, configurations: .inMemory())
        var changes = container.changes.makeAsyncIterator()
        let context = ModelContext(container)
        context.author = "planner"
        let spring = Trip(name: "Spring", items: [Item("Map")])
        context.insert(spring)
        try context.save()

        let first = try #require(await changes.next())
        #expect(Set(first.insertedIdentifiers) == [spring.persistentModelID, spring.items[0].persistentModelID])
        #expect(first.updatedIdentifiers.isEmpty && first.deletedIdentifiers.isEmpty)
        #expect(first.author == "planner")
        #expect(first.historyTokens.count == 1)
        #expect(first.entityNames == ["Trip", "Item"])
        #expect(first.touches(anyOf: ["Item"]) && !first.touches(anyOf: ["Destination"]))

        spring.budget = 120
        try context.save()
        let second = try #require(await changes.next())
        #expect(second.updatedIdentifiers == [spring.persistentModelID])
        #expect(try #require(second.historyTokens.first) > #require(first.historyTokens.first))

        try context.delete(model: Item.self)
        let third = try #require(await changes.next())
        #expect(third.deletedIdentifiers.count == 1 && third.deletedIdentifiers[0].entityName == "Item")

        try container.erase()
        let fourth = try #require(await changes.next())
        #expect(fourth.invalidatesAllIdentifiers && fourth.origin == .erase && fourth.touches(anyOf: ["Trip"]))
    }

    @Test func eraseAndDeleteAllDataPostInvalidatedAllIdentifiers() throws {
        let container = try ModelContainer(for: Trip.self, configurations: .inMemory())
        let context = ModelContext(container)
        context.insert(Trip(name: "Lisbon"))
        try context.save()
        // (invalidatedAllIdentifiers, deletedIdentifiers.count) of each notification posted for the container.
        let posted = LockedValue<[(Bool?, Int?)]>([])
        let observer = NotificationCenter.default.addObserver(
            forName: ModelContext.didSave, object: container, queue: nil
        ) { note in
            let info = note.userInfo ?? [:]
            let invalidated = info[ModelContext.NotificationKey.invalidatedAllIdentifiers.rawValue] as? Bool
            let deleted = info[ModelContext.NotificationKey.deletedIdentifiers.rawValue] as? [PersistentIdentifier]
            posted.withLock { $0.append((invalidated, deleted?.count)) }
        }
        defer { NotificationCenter.default.removeObserver(observer) }

        try container.deleteAllData()
        #expect(try ModelContext(container).fetchCount(FetchDescriptor<Trip>()) == 0)
        let notes = posted.withLock { $0 }
        #expect(notes.count == 1)
        #expect(notes.first?.0 == true && notes.first?.1 == 0)
    }

    @Test func aSaveWithNothingToStorePublishesNothing() async throws {
        let container = try ModelContainer(for: Trip.self, configurations: .inMemory())
        var changes = container.changes.makeAsyncIterator()
        let context = ModelContext(container)
        try context.save()
        context.insert(Trip(name: "Only"))
        try context.save()
        // The first event is the insert: the empty save before it published nothing.
        #expect(try #require(await changes.next()).insertedIdentifiers.count == 1)
    }

    @Test func eachIteratorIsItsOwnSubscription() async throws {
        let container = try ModelContainer(for: Trip.self, configurations: .inMemory())
        var early = container.changes.makeAsyncIterator()
        let context = ModelContext(container)
        context.insert(Trip(name: "A"))
        try context.save()
        var late = container.changes.makeAsyncIterator()
        context.insert(Trip(name: "B"))
        try context.save()
        #expect(try #require(await early.next()).insertedIdentifiers.count == 1)
        #expect(try #require(await early.next()).insertedIdentifiers.count == 1)
        // The late subscriber sees only the save after it subscribed.
        let seen = try #require(await late.next())
        #expect(try context.model(for: seen.insertedIdentifiers[0], as: Trip.self)?.name == "B")
    }
}

struct CoreHistoryTests {
    typealias Descriptor = HistoryDescriptor<DefaultHistoryTransaction>

    @Test func theLimitDropsTheOldestTransactionsAndExpiresTheirTokens() throws {
        let container = try ModelContainer(for: Trip.self, configurations: InMemoryStoreConfiguration(historyLimit: 2))
        let context = ModelContext(container)
        for name in ["A", "B", "C"] {
            context.insert(Trip(name: name))
            try context.save()
        }
        let kept = try context.fetchHistory(Descriptor())
        #expect(kept.map(\.transactionIdentifier) == [2, 3])
        let first = DefaultHistoryToken(storeIdentifier: kept[0].storeIdentifier, transactionNumber: 1)
        // After the dropped transaction: no gap, so no error.
        #expect(try context.fetchHistory(Descriptor(predicate: #Predicate { $0.token > first })).count == 2)
        // From the dropped transaction on: it would be missing.
        expectError(.historyTokenExpired) {
            try context.fetchHistory(Descriptor(predicate: #Predicate { $0.token >= first }))
        }
        // A predicate that does not select by token is never refused.
        #expect(try context.fetchHistory(Descriptor(predicate: #Predicate { $0.author == nil })).count == 2)
    }

    /// `record(count:changes:)` skips building a transaction that alone is over the limit, and leaves
    /// the history exactly as appending and trimming it does.
    @Test func aTransactionOverTheLimitIsNumberedAndExpiredWithoutItsChanges() {
        func change(_ key: Int64) -> StoreHistoryRecord.Change {
            StoreHistoryRecord.Change(.delete, .identifier(for: "s", entityName: "Trip", primaryKey: key))
        }
        for (limit, sizes) in [(3, [2, 4, 1]), (3, [1, 1, 3, 5, 2]), (5, [6, 6])] {
            var eager = StoreHistory(limit: limit)
            var lazy = StoreHistory(limit: limit)
            for size in sizes {
                let changes = (0..<Int64(size)).map(change)
                var built = false
                let number = lazy.record(count: size, author: nil) {
                    built = true
                    return changes
                }
                #expect(number == eager.record(changes, author: nil))
                #expect(built == (size <= limit), "limit \(limit), a transaction of \(size)")
                #expect(lazy.records.map(\.number) == eager.records.map(\.number))
                #expect(lazy.changeCount == eager.changeCount)
                #expect(lazy.lastNumber == eager.lastNumber && lazy.expiredThrough == eager.expiredThrough)
            }
        }
        var history = StoreHistory(limit: 3)
        #expect(history.record(count: 0, author: nil) { [] } == nil)
    }

    /// A batch delete of more models than the history keeps expires every earlier token, as trimming does.
    @Test func aBatchDeleteOverTheLimitExpiresTheHistoryBeforeIt() throws {
        let container = try ModelContainer(for: Trip.self, configurations: InMemoryStoreConfiguration(historyLimit: 3))
        let context = ModelContext(container)
        context.insert(Trip(name: "A"))
        try context.save()
        let storeIdentifier = try #require(try context.fetchHistory(Descriptor()).first).storeIdentifier
        for name in ["B", "C", "D"] { context.insert(Trip(name: name)) }
        try context.save()
        // Four deletes, over the limit of three: transaction 3, expired at once with 1 and 2.
        try context.delete(model: Trip.self)
        #expect(try context.fetchCount(FetchDescriptor<Trip>()) == 0)
        #expect(try context.fetchHistory(Descriptor()).isEmpty)
        let first = DefaultHistoryToken(storeIdentifier: storeIdentifier, transactionNumber: 3)
        expectError(.historyTokenExpired) {
            try context.fetchHistory(Descriptor(predicate: #Predicate { $0.token >= first }))
        }
        context.insert(Trip(name: "E"))
        try context.save()
        #expect(try context.fetchHistory(Descriptor()).map(\.transactionIdentifier) == [4])
    }

    /// A save of more models than the history keeps is numbered and expires at once, with every
    /// transaction before it; the next save is recorded under the next number.
    @Test func aSaveOverTheLimitExpiresTheHistoryBeforeIt() throws {
        let container = try ModelContainer(for: Trip.self, configurations: InMemoryStoreConfiguration(historyLimit: 3))
        let context = ModelContext(container)
        context.insert(Trip(name: "A"))
        try context.save()
        let storeIdentifier = try #require(try context.fetchHistory(Descriptor()).first).storeIdentifier
        for name in ["B", "C", "D", "E"] { context.insert(Trip(name: name)) }
        try context.save()
        #expect(try context.fetchCount(FetchDescriptor<Trip>()) == 5)
        #expect(try context.fetchHistory(Descriptor()).isEmpty)
        let second = DefaultHistoryToken(storeIdentifier: storeIdentifier, transactionNumber: 2)
        expectError(.historyTokenExpired) {
            try context.fetchHistory(Descriptor(predicate: #Predicate { $0.token >= second }))
        }
        context.insert(Trip(name: "F"))
        try context.save()
        #expect(try context.fetchHistory(Descriptor()).map(\.transactionIdentifier) == [3])
    }

    @Test func aContainerWithSeveralStoresReadsEveryStoresHistory() throws {
        let tripsStore = InMemoryStoreConfiguration(name: "trips", schema: Schema([Trip.self, Item.self]))
        let container = try ModelContainer(
            for: Schema([Trip.self, Author.self]), configurations: [tripsStore, .inMemory(name: "rest")])
        let context = ModelContext(container)
        let recorder = HistoryTokenRecorder(context)
        context.insert(Trip(name: "Both"))
        context.insert(Author("Ada", "Lovelace", email: "a@x"))
        try context.save()
        let tokens = recorder.tokens
        #expect(Set(tokens.map(\.storeIdentifier)) == Set(container.stores.map(\.identifier)))
        let history = try context.fetchHistory(Descriptor())
        #expect(history.count == 2)
        #expect(Set(history.map(\.token)) == Set(tokens))
        var limited = Descriptor()
        limited.fetchLimit = 1
        #expect(try context.fetchHistory(limited).count == 1)
    }

    @Test func aContainerWithoutHistoryRefusesClearly() throws {
        let container = try ModelContainer(
            for: Trip.self, configurations: SwiftDataStyleStore.Configuration(name: "plain"))
        let error = expectError(.unsupportedFeature) { try ModelContext(container).fetchHistory(Descriptor()) }
        #expect(error?.message.contains("'plain'") == true)
    }

    @Test func tombstonesAndUpdatedAttributesAreReadByKeyPath() throws {
        let container = try ModelContainer(for: Trip.self, configurations: .inMemory())
        let context = ModelContext(container)
        let trip = Trip(name: "Autumn")
        context.insert(trip)
        try context.save()
        trip.budget = 10
        trip.isDone = true
        try context.save()
        let update = try #require(
            try context.fetchHistory(Descriptor()).last?.changes.compactMap { change -> DefaultHistoryUpdate<Trip>? in
                if case .update(let update as DefaultHistoryUpdate<Trip>) = change { return update }
                return nil
            }.first)
        #expect(update.updatedAttributes.contains(\.budget) && update.updatedAttributes.contains(\Trip.isDone))
        #expect(!update.updatedAttributes.contains(\.name))
        #expect(update.updatedAttributes.names == ["budget", "isDone"])
        #expect(update.updatedAttributes.count == Array(update.updatedAttributes).count)
    }
}
