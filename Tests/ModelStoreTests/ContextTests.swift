import Foundation
import ModelStore
import ModelStoreInMemory
import ModelStoreTestSupport
import Testing

/// The app-level scenario: trips with items (cascade), a destination (nullify) and a unique name.
struct TripAppTests {
    let container: ModelContainer
    let context: ModelContext

    init() throws {
        container = try ModelContainer(for: Trip.self, configurations: .inMemory())
        context = ModelContext(container)
    }

    func seed() throws -> (rome: Destination, spring: Trip, autumn: Trip) {
        let rome = Destination("Rome")
        let spring = Trip(
            name: "Spring", budget: 1200, destination: rome, items: [Item("Passport"), Item("Shoes", quantity: 2)])
        let autumn = Trip(name: "Autumn", budget: 300, destination: rome, items: [Item("Umbrella")])
        context.insert(spring)
        context.insert(autumn)
        try context.save()
        return (rome, spring, autumn)
    }

    @Test func insertFetchMutateSave() throws {
        let (_, spring, _) = try seed()
        #expect(!context.hasChanges)
        spring.budget = 1500
        #expect(context.hasChanges)
        #expect(spring.hasChanges)
        #expect(context.changedModelsArray.count == 1)
        try context.save()
        #expect(!context.hasChanges)
        let other = ModelContext(container)
        let fetched = try other.fetch(FetchDescriptor<Trip>(sortBy: [SortDescriptor(\.budget)]))
        #expect(fetched.map(\.name) == ["Autumn", "Spring"])
        #expect(fetched.last?.budget == 1500)
    }

    @Test func rollbackRestoresTheLastSavedValues() throws {
        let (_, spring, _) = try seed()
        spring.name = "Changed"
        spring.budget = 1
        let extra = Trip(name: "Extra")
        context.insert(extra)
        context.delete(
            try #require(context.fetch(FetchDescriptor<Trip>(predicate: #Predicate { $0.name == "Autumn" })).first))
        context.rollback()
        #expect(!context.hasChanges)
        #expect(spring.name == "Spring")
        #expect(spring.budget == 1200)
        #expect(extra.modelContext == nil)
        #expect(try context.fetchCount(FetchDescriptor<Trip>()) == 2)
    }

    @Test func cascadeDeletesItemsAndNullifyClearsTheDestination() throws {
        let (rome, spring, _) = try seed()
        context.delete(spring)
        #expect(spring.isDeleted)
        try context.save()
        #expect(try context.fetchCount(FetchDescriptor<Trip>()) == 1)
        #expect(try context.fetch(FetchDescriptor<Item>()).map(\.title) == ["Umbrella"])
        #expect(rome.trips.map(\.name) == ["Autumn"])
        let fresh = ModelContext(container)
        let destination = try #require(try fresh.fetch(FetchDescriptor<Destination>()).first)
        #expect(destination.trips.map(\.name) == ["Autumn"])
    }

    @Test func uniqueViolationThrowsAndLeavesTheStoreAsItWas() throws {
        _ = try seed()
        let before = try ModelContext(container).fetch(FetchDescriptor<Trip>(sortBy: [SortDescriptor(\.name)])).map(
            \.name)
        let duplicate = Trip(name: "Spring", budget: 1)
        let fine = Trip(name: "Winter")
        context.duplicateInsertPolicy = .error  // refuse the duplicate rather than upsert it
        context.insert(fine)
        context.insert(duplicate)
        let error = try #require(throws: DataStoreError.self) { try context.save() }
        #expect(error.code == .uniqueConstraintViolation)
        #expect(error.entityName == "Trip")
        #expect(error.propertyNames == ["name"])
        #expect(error.conflictingValues == [.string("Spring")])
        #expect(!error.description.contains("Spring"), "record contents stay out of descriptions")
        let after = try ModelContext(container).fetch(FetchDescriptor<Trip>(sortBy: [SortDescriptor(\.name)])).map(
            \.name)
        #expect(after == before)
        #expect(context.hasChanges, "the failed save keeps the pending changes")
        context.delete(duplicate)
        try context.save()
        #expect(try ModelContext(container).fetchCount(FetchDescriptor<Trip>()) == 3)
    }

    @Test func unknownIdentifierGivesNil() throws {
        let (_, spring, _) = try seed()
        let unknown = PersistentIdentifier.identifier(
            for: spring.persistentModelID.storeIdentifier!, entityName: "Trip", primaryKey: Int64(999_999))
        #expect(try context.model(for: unknown, as: Trip.self) == nil)
        #expect(context.registeredModel(for: unknown, as: Trip.self) == nil)
        let otherEntity = PersistentIdentifier.identifier(for: "nowhere", entityName: "Nope", primaryKey: Int64(1))
        #expect(try context.model(for: otherEntity, as: Trip.self) == nil)
        #expect(try ModelContext(container).model(for: spring.persistentModelID, as: Trip.self)?.name == "Spring")
    }

    @Test func oneObjectPerIdentifierPerContext() throws {
        let (_, spring, _) = try seed()
        let again = try context.fetch(FetchDescriptor<Trip>(predicate: #Predicate { $0.name == "Spring" }))
        #expect(again.first === spring)
        #expect(context.registeredModel(for: spring.persistentModelID, as: Trip.self) === spring)
        let item = try #require(
            try context.fetch(FetchDescriptor<Item>(predicate: #Predicate { $0.title == "Passport" })).first)
        #expect(item.trip === spring)
    }

    /// A save of many inserts re-keys the registry in one pass (more than 64 inserts, at least
    /// half of the registered models): every model stays registered under its one identifier.
    @Test func aLargeSaveKeepsEveryModelRegisteredUnderItsPermanentIdentifier() throws {
        let (rome, spring, autumn) = try seed()
        let trips = (0..<100).map { Trip(name: "Trip \($0)", budget: Double($0)) }
        for trip in trips { context.insert(trip) }
        let dropped = Trip(name: "Dropped")
        context.insert(dropped)
        let droppedID = dropped.persistentModelID
        context.delete(dropped)
        let temporaryIDs = trips.map(\.persistentModelID)
        try context.save()
        for (trip, temporary) in zip(trips, temporaryIDs) {
            let id = trip.persistentModelID
            #expect(!id.isTemporary && context.registeredModel(for: id, as: Trip.self) === trip)
            #expect(context.registeredModel(for: temporary, as: Trip.self) == nil)
        }
        #expect(context.registeredModel(for: droppedID, as: Trip.self) == nil && dropped.modelContext == nil)
        #expect(context.registeredModel(for: spring.persistentModelID, as: Trip.self) === spring)
        #expect(context.registeredModel(for: autumn.persistentModelID, as: Trip.self) === autumn)
        #expect(context.registeredModel(for: rome.persistentModelID, as: Destination.self) === rome)
        #expect(try context.fetch(FetchDescriptor<Trip>()).count == 102)
        trips[7].budget = 70
        try context.save()
        #expect(try ModelContext(container).model(for: trips[7].persistentModelID, as: Trip.self)?.budget == 70)
    }

    @Test func relationshipsLoadLazilyAndInversesStayInStep() throws {
        _ = try seed()
        let fresh = ModelContext(container)
        let trip = try #require(
            try fresh.fetch(FetchDescriptor<Trip>(predicate: #Predicate { $0.name == "Autumn" })).first)
        #expect(fresh.registeredModel(for: trip.persistentModelID, as: Trip.self) === trip)
        let items = trip.items
        #expect(items.map(\.title) == ["Umbrella"])
        let sock = Item("Sock")
        sock.trip = trip
        #expect(trip.items.map(\.title) == ["Umbrella", "Sock"])
        #expect(sock.modelContext == nil)
        fresh.processPendingChanges()
        #expect(sock.modelContext === fresh)
        try fresh.save()
        let moved = try #require(items.first)
        let spring = try #require(
            try fresh.fetch(FetchDescriptor<Trip>(predicate: #Predicate { $0.name == "Spring" })).first)
        moved.trip = spring
        #expect(trip.items.map(\.title) == ["Sock"])
        #expect(spring.items.contains { $0 === moved })
        try fresh.save()
        let check = ModelContext(container)
        let springAgain = try #require(
            try check.fetch(FetchDescriptor<Trip>(predicate: #Predicate { $0.name == "Spring" })).first)
        #expect(Set(springAgain.items.map(\.title)) == ["Passport", "Shoes", "Umbrella"])
    }

    @Test func includePendingChanges() throws {
        let (_, spring, _) = try seed()
        let draft = Trip(name: "Draft", budget: 5000)
        context.insert(draft)
        spring.budget = 10
        let rich = #Predicate<Trip> { $0.budget > 1000 }
        #expect(try context.fetch(FetchDescriptor(predicate: rich)).map(\.name) == ["Draft"])
        var saved = FetchDescriptor(predicate: rich)
        saved.includePendingChanges = false
        #expect(try context.fetch(saved).map(\.name) == ["Spring"])
        #expect(try context.fetchCount(FetchDescriptor(predicate: rich)) == 1)
        #expect(try context.fetchIdentifiers(FetchDescriptor(predicate: rich)) == [draft.persistentModelID])
        var limited = FetchDescriptor<Trip>(sortBy: [SortDescriptor(\.name)])
        limited.fetchOffset = 1
        limited.fetchLimit = 1
        #expect(try context.fetch(limited).map(\.name) == ["Draft"])
    }

    @Test func transactionSavesOrRollsBack() throws {
        _ = try seed()
        try context.transaction { context.insert(Trip(name: "Summer")) }
        #expect(try ModelContext(container).fetchCount(FetchDescriptor<Trip>()) == 3)
        context.duplicateInsertPolicy = .error
        expectError(.uniqueConstraintViolation) {
            try context.transaction { context.insert(Trip(name: "Summer")) }
        }
        #expect(!context.hasChanges)
        #expect(try ModelContext(container).fetchCount(FetchDescriptor<Trip>()) == 3)
    }

    @Test func saveNotificationsCarryIdentifiers() throws {
        let (_, spring, autumn) = try seed()
        nonisolated(unsafe) var received: [String: [PersistentIdentifier]] = [:]
        nonisolated(unsafe) var willSaveCount = 0
        let center = NotificationCenter.default
        let will = center.addObserver(forName: ModelContext.willSave, object: context, queue: nil) { _ in
            willSaveCount += 1
        }
        let did = center.addObserver(forName: ModelContext.didSave, object: context, queue: nil) { note in
            for key in [ModelContext.NotificationKey.insertedIdentifiers, .updatedIdentifiers, .deletedIdentifiers] {
                received[key.rawValue] = note.userInfo?[key.rawValue] as? [PersistentIdentifier]
            }
        }
        defer {
            center.removeObserver(will)
            center.removeObserver(did)
        }
        let winter = Trip(name: "Winter")
        context.insert(winter)
        spring.budget = 1
        let autumnID = autumn.persistentModelID
        let umbrellaIDs = autumn.items.map(\.persistentModelID)
        context.delete(autumn)
        try context.save()
        #expect(willSaveCount == 1)
        #expect(received["insertedIdentifiers"] == [winter.persistentModelID])
        #expect(received["updatedIdentifiers"]?.contains(spring.persistentModelID) == true)
        #expect(Set(received["deletedIdentifiers"] ?? []) == Set([autumnID] + umbrellaIDs))
    }

    @Test func enumerateVisitsEveryMatchInBatches() throws {
        let trips = (0..<25).map { Trip(name: "Trip \($0)", budget: Double($0)) }
        for trip in trips { context.insert(trip) }
        try context.save()
        let fresh = ModelContext(container)
        var names: [String] = []
        try fresh.enumerate(
            FetchDescriptor<Trip>(predicate: #Predicate { $0.budget >= 5 }, sortBy: [SortDescriptor(\.budget)]),
            batchSize: 4
        ) {
            names.append($0.name)
        }
        #expect(names == (5..<25).map { "Trip \($0)" })
        #expect(
            fresh.registeredModel(for: trips[7].persistentModelID, as: Trip.self) == nil,
            "enumerate releases unchanged models")
    }
}

struct DeleteRuleTests {
    @Test func denyRuleFailsTheSaveAndChangesNothing() throws {
        let container = try ModelContainer(for: Author.self, configurations: .inMemory())
        let context = ModelContext(container)
        let author = Author("Ada", "Lovelace", email: "ada@example.com")
        let book = Book("Notes", author: author)
        context.insert(book)
        try context.save()
        context.delete(author)
        let error = try #require(throws: DataStoreError.self) { try context.save() }
        #expect(error.code == .denyRuleViolation)
        #expect(error.propertyNames == ["books"])
        #expect(try ModelContext(container).fetchCount(FetchDescriptor<Author>()) == 1)
        context.rollback()
        context.delete(book)
        context.delete(author)
        try context.save()
        #expect(try ModelContext(container).fetchCount(FetchDescriptor<Author>()) == 0)
    }

    @Test func compoundUniqueConstraintIsEnforced() throws {
        let container = try ModelContainer(for: Author.self, configurations: .inMemory())
        container.duplicateInsertPolicy = .error
        let context = ModelContext(container)
        context.insert(Author("Ada", "Lovelace", email: "a@x"))
        context.insert(Author("Ada", "Byron", email: "b@x"))
        try context.save()
        context.insert(Author("Ada", "Lovelace", email: "c@x"))
        let error = try #require(throws: DataStoreError.self) { try context.save() }
        #expect(error.propertyNames == ["first", "last"])
    }

    @Test func relationshipCountLimitsAreChecked() throws {
        let container = try ModelContainer(for: Author.self, configurations: .inMemory())
        let context = ModelContext(container)
        let book = Book("A")
        book.related = [Book("B"), Book("C"), Book("D")]
        context.insert(book)
        expectError(.relationshipCountViolation) { try context.save() }
        book.related.removeLast()
        try context.save()
    }
}

struct BatchTests {
    @Test func batchInsertUpdateAndDelete() throws {
        let container = try ModelContainer(for: Author.self, configurations: .inMemory())
        let context = ModelContext(container)
        let ids = try context.insert(
            Author.self,
            rows: (0..<10).map { index in
                [.set(\.first, to: "F\(index)"), .set(\.last, to: "L\(index)"), .set(\.email, to: "\(index)@x")]
            })
        #expect(ids.count == 10)
        #expect(ids.allSatisfy { !$0.isTemporary })
        let registered = try #require(try context.model(for: ids[0], as: Author.self))
        let changed = try context.update(
            Author.self, where: #Predicate { $0.last >= "L5" }, set: [.set(\.first, to: "Late")])
        #expect(changed == 5)
        #expect(try context.fetchCount(FetchDescriptor<Author>(predicate: #Predicate { $0.first == "Late" })) == 5)
        expectError(.uniqueConstraintViolation) {
            try context.update(Author.self, set: [.set(\.email, to: "same@x")])
        }
        #expect(try context.fetchCount(FetchDescriptor<Author>(predicate: #Predicate { $0.email == "same@x" })) == 0)
        try context.delete(model: Author.self, where: #Predicate { $0.first == "Late" })
        #expect(try context.fetchCount(FetchDescriptor<Author>()) == 5)
        #expect(registered.first == "F0")
        expectError(.uniqueConstraintViolation) {
            try context.insert(
                Author.self, rows: [[.set(\.first, to: "X"), .set(\.last, to: "Y"), .set(\.email, to: "0@x")]])
        }
        #expect(try context.fetchCount(FetchDescriptor<Author>()) == 5)
    }

    /// A batch row stores each value exactly as a model's property does, for the types whose
    /// assignments convert in line (`String`, `Int`, `Double`, `Bool`, `Date`, `Int64`) and for those
    /// that go through their codec.
    @Test(arguments: [0, 1, 2])
    func batchRowsStoreWhatModelsStore(variant: Int) throws {
        let doubles: [Double] = [.nan, -0.0, .infinity]
        let strings = ["", "é\u{301}x", String(repeating: "long text ", count: 8)]
        let ints = [Int.min, 0, Int.max]
        let dates = [Date(timeIntervalSinceReferenceDate: -1.5), .distantFuture, Date(timeIntervalSince1970: 0)]
        let container = try ModelContainer(for: Kitchen.self, configurations: .inMemory())
        let context = ModelContext(container)
        let model = Kitchen()
        model.flag = variant == 1
        model.int = ints[variant]
        model.int64 = Int64(ints[2 - variant])
        model.double = doubles[variant]
        model.string = strings[variant]
        model.date = dates[variant]
        model.int32 = Int32(variant - 1) * .max
        model.optionalString = variant == 0 ? nil : strings[variant]
        model.uuid = UUID()
        context.insert(model)
        try context.save()
        let ids = try context.insert(
            Kitchen.self,
            rows: [
                [
                    .set(\.flag, to: model.flag), .set(\.int, to: model.int), .set(\.int64, to: model.int64),
                    .set(\.double, to: model.double), .set(\.string, to: model.string), .set(\.date, to: model.date),
                    .set(\.int32, to: model.int32), .set(\.optionalString, to: model.optionalString),
                    .set(\.uuid, to: model.uuid),
                ]
            ])
        let reader = ModelContext(container)
        let stored = try #require(try reader.model(for: model.persistentModelID, as: Kitchen.self))
        let batched = try #require(try reader.model(for: ids[0], as: Kitchen.self))
        #expect(batched.flag == stored.flag)
        #expect(batched.int == stored.int && batched.int64 == stored.int64 && batched.int32 == stored.int32)
        #expect(batched.double.bitPattern == stored.double.bitPattern)
        #expect(batched.string == stored.string && batched.string.utf8.elementsEqual(stored.string.utf8))
        #expect(batched.date == stored.date)
        #expect(batched.optionalString == stored.optionalString)
        #expect(batched.uuid == stored.uuid)
        // And both as the model had them.
        #expect(stored.int == model.int && stored.string == model.string && stored.date == model.date)
        #expect(stored.double.bitPattern == model.double.bitPattern || (stored.double.isNaN && model.double.isNaN))
    }

    /// Rows may set different properties, in different orders: each value lands in its own
    /// property and the others keep their initial values; a row that sets a property the entity
    /// does not store fails the whole batch, which stores nothing.
    @Test func batchRowsSetAnyPropertiesInAnyOrder() throws {
        let container = try ModelContainer(for: Kitchen.self, configurations: .inMemory())
        let context = ModelContext(container)
        let ids = try context.insert(
            Kitchen.self,
            rows: [
                [.set(\.string, to: "a"), .set(\.int, to: 1)],
                [.set(\.int, to: 2), .set(\.string, to: "b")],
                [.set(\.double, to: 2.5)],
                [.set(\.string, to: "d"), .set(\.int, to: 4), .set(\.optionalInt, to: 7)],
                [.set(\.int, to: 5), .set(\.int, to: 6)],
            ])
        let reader = ModelContext(container)
        let models = try ids.map { try #require(try reader.model(for: $0, as: Kitchen.self)) }
        #expect(models.map(\.string) == ["a", "b", "", "d", ""])
        #expect(models.map(\.int) == [1, 2, 0, 4, 6])
        #expect(models.map(\.double) == [0, 0, 2.5, 0, 0])
        #expect(models.map(\.optionalInt) == [nil, nil, nil, 7, nil])
        #expect(models.allSatisfy { $0.url == URL(string: "https://example.com")! && $0.priority == .normal })

        let error = expectError(.invalidValue) {
            try context.insert(Kitchen.self, rows: [[.set(\.string, to: "e")], [.set(\.shouted, to: "F")]])
        }
        #expect(error?.message.contains("not stored") == true)
        #expect(try context.fetchCount(FetchDescriptor<Kitchen>()) == 5)
    }

    /// A batch insert takes its rows from any sequence and reads it once, in order: a lazy map over
    /// records, or a sequence that can be walked only once.
    @Test func batchRowsComeFromASequenceReadOnce() throws {
        final class Walks { var count = 0 }
        /// Yields `count` rows, and fails the test if it is walked a second time.
        struct OnePass: Sequence {
            let count: Int
            let walks: Walks

            func makeIterator() -> AnyIterator<[BatchAssignment<Kitchen>]> {
                walks.count += 1
                #expect(walks.count == 1, "the batch insert walked its rows \(walks.count) times")
                var next = 0
                return AnyIterator {
                    guard next < count else { return nil }
                    defer { next += 1 }
                    return [.set(\.int, to: next), .set(\.string, to: "one-pass \(next)")]
                }
            }
        }
        let container = try ModelContainer(for: Kitchen.self, configurations: .inMemory())
        let context = ModelContext(container)
        let records = [("x", 10), ("y", 20), ("z", 30)]
        let lazyIDs = try context.insert(
            Kitchen.self, rows: records.lazy.map { [.set(\.string, to: $0.0), .set(\.int, to: $0.1)] })
        let walks = Walks()
        let onePassIDs = try context.insert(Kitchen.self, rows: OnePass(count: 4, walks: walks))
        #expect(walks.count == 1)
        let reader = ModelContext(container)
        let lazyModels = try lazyIDs.map { try #require(try reader.model(for: $0, as: Kitchen.self)) }
        #expect(lazyModels.map(\.string) == ["x", "y", "z"] && lazyModels.map(\.int) == [10, 20, 30])
        let onePassModels = try onePassIDs.map { try #require(try reader.model(for: $0, as: Kitchen.self)) }
        #expect(onePassModels.map(\.int) == [0, 1, 2, 3])
        #expect(onePassModels.map(\.string) == (0..<4).map { "one-pass \($0)" })
        #expect(try reader.fetchCount(FetchDescriptor<Kitchen>()) == 7)
    }

    @Test func batchDeleteAppliesDeleteRules() throws {
        let container = try ModelContainer(for: Trip.self, configurations: .inMemory())
        let context = ModelContext(container)
        context.insert(Trip(name: "A", budget: 1, items: [Item("x"), Item("y")]))
        context.insert(Trip(name: "B", budget: 2, items: [Item("z")]))
        try context.save()
        try context.delete(model: Trip.self, where: #Predicate { $0.budget < 2 })
        #expect(try context.fetch(FetchDescriptor<Trip>()).map(\.name) == ["B"])
        #expect(try context.fetch(FetchDescriptor<Item>()).map(\.title) == ["z"])
    }
}

struct PrefetchTests {
    @Test func prefetchedRelationshipsAreLoadedAtFetchTime() throws {
        let container = try ModelContainer(for: Trip.self, configurations: .inMemory())
        let writer = ModelContext(container)
        writer.insert(Trip(name: "A", items: [Item("a1"), Item("a2")]))
        writer.insert(Trip(name: "B", items: [Item("b1")]))
        try writer.save()

        let reader = ModelContext(container)
        var descriptor = FetchDescriptor<Trip>(sortBy: [SortDescriptor(\.name)])
        descriptor.relationshipKeyPathsForPrefetching = [\Trip.items]
        let prefetched = try reader.fetch(descriptor)
        let lazy = try ModelContext(container).fetch(FetchDescriptor<Trip>(sortBy: [SortDescriptor(\.name)]))
        // Remove the items behind both readers' backs: only the prefetched ones still have them.
        try ModelContext(container).delete(model: Item.self)
        #expect(prefetched.map { $0.items.count } == [2, 1])
        #expect(lazy.map { $0.items.count } == [0, 0])
    }

    @Test func prefetchingANonRelationshipIsAnError() throws {
        let container = try ModelContainer(for: Trip.self, configurations: .inMemory())
        let context = ModelContext(container)
        context.insert(Trip(name: "A"))
        try context.save()
        var descriptor = FetchDescriptor<Trip>()
        descriptor.relationshipKeyPathsForPrefetching = [\Trip.name]
        expectError(.invalidValue) { try ModelContext(container).fetch(descriptor) }
    }
}

/// ``ModelContext/fetch(_:batchSize:)``: a result read from the store a batch at a time.
struct BatchedFetchTests {
    let container: ModelContainer

    init() throws {
        container = try ModelContainer(for: Trip.self, configurations: .inMemory())
        let setup = ModelContext(container)
        for index in 0..<25 { setup.insert(Trip(name: String(format: "trip %02d", index), budget: Double(index))) }
        try setup.save()
    }

    @Test func theCollectionHoldsTheResultInOrderAndReadsItABatchAtATime() throws {
        let context = ModelContext(container)
        var descriptor = FetchDescriptor<Trip>(
            predicate: #Predicate { $0.budget >= 3 }, sortBy: [SortDescriptor(\.budget, order: .reverse)])
        descriptor.fetchLimit = 20
        let trips = try context.fetch(descriptor, batchSize: 6)
        #expect(trips.count == 20 && trips.batchSize == 6)
        #expect(trips.identifiers == (try context.fetchIdentifiers(descriptor)))
        #expect(trips.map(\.budget) == (try context.fetch(descriptor)).map(\.budget))
        #expect(trips.last?.name == "trip 05")
    }

    @Test func aModelEnumerateHandedOutAndTheCallerKeptStillSavesItsChanges() throws {
        let context = ModelContext(container)
        var kept: [Trip] = []
        try context.enumerate(FetchDescriptor<Trip>(sortBy: [SortDescriptor(\.name)]), batchSize: 4) { trip in
            if trip.name == "trip 02" { kept.append(trip) }
        }
        let trip = try #require(kept.first)
        #expect(context.registeredModel(for: trip.persistentModelID, as: Trip.self) === trip)
        #expect(context.registeredModel(for: kept[0].persistentModelID, as: Trip.self) != nil)
        let released = try context.fetchIdentifiers(FetchDescriptor<Trip>()).filter {
            context.registeredModel(for: $0, as: Trip.self) != nil
        }
        #expect(released == [trip.persistentModelID], "the models nobody kept were released")
        trip.budget = 77
        try context.save()
        let stored = try ModelContext(container).fetch(
            FetchDescriptor<Trip>(predicate: #Predicate { $0.name == "trip 02" }))
        #expect(stored.first?.budget == 77)
    }

    @Test func modelsOfEarlierBatchesAreReleasedUnlessSomethingHoldsThem() throws {
        let context = ModelContext(container)
        let trips = try context.fetch(FetchDescriptor<Trip>(sortBy: [SortDescriptor(\.name)]), batchSize: 5)
        let kept = trips[0]
        kept.budget = 1_000  // an unsaved change, on a model the test holds
        _ = trips[1].name
        _ = trips[7].name  // loads the second batch: the first one's other models can go
        let registered = trips.identifiers.prefix(5).filter {
            context.registeredModel(for: $0, as: Trip.self) != nil
        }
        #expect(registered == [kept.persistentModelID], "only the model something holds stays registered")
        try context.save()
        let stored = try ModelContext(container).fetch(
            FetchDescriptor<Trip>(predicate: #Predicate { $0.name == "trip 00" }))
        #expect(stored.first?.budget == 1_000, "the kept model's change was saved")
    }
}

extension Kitchen {
    /// A computed property: a key path the schema does not store.
    var shouted: String { string.uppercased() }
}
