import Foundation
import ModelStoreInMemory
import ModelStoreTestSupport
import Observation
import Testing

@testable import ModelStore

/// A model whose attributes are all values that read back as they were saved, so that once saved
/// and unchanged it keeps no copy of its saved values.
final class SavedNote: PersistentModel {
    enum Priority: String, Codable { case low, high }

    @Attribute(.unique) var title: String = ""
    @Attribute var count: Int = 0
    @Attribute var weight: Double = 0
    @Attribute var due: Date? = nil
    @Attribute var priority: Priority = .low
    @Attribute var tags: [String] = []

    let persistentBackingData = BackingData()
    init() {}
    convenience init(_ title: String, count: Int = 0) {
        self.init()
        self.title = title
        self.count = count
    }
}

/// A model with a composite `Codable` value, which may hold objects: it keeps a copy.
final class SavedSketch: PersistentModel {
    struct Size: Codable, Hashable {
        var width = 0
        var height = 0
    }

    @Attribute var name: String = ""
    @Attribute var size = Size()

    let persistentBackingData = BackingData()
    init() {}
}

/// The saved values of a saved, unchanged model whose values read back as saved: the model's own
/// values stand for them (it keeps no copy) until a write, which copies them first. Rollback, undo,
/// conflicts, refreshes by fetch and merges read them as before.
struct SavedValuesTests {
    let container: ModelContainer
    let context: ModelContext
    let note: SavedNote

    /// `note` ("Lisbon", 1) inserted in `context` and saved.
    init() throws {
        container = try ModelContainer(for: SavedNote.self, SavedSketch.self, Trip.self, configurations: .inMemory())
        context = ModelContext(container)
        note = SavedNote("Lisbon", count: 1)
        context.insert(note)
        try context.save()
    }

    private func stored() throws -> SavedNote {
        try #require(try ModelContext(container).fetch(FetchDescriptor<SavedNote>()).first)
    }

    /// The other context's copy of the note, changed and saved.
    private func saveElsewhere(_ change: (SavedNote) -> Void) throws {
        let other = ModelContext(container)
        let theirs = try #require(try other.fetch(FetchDescriptor<SavedNote>()).first)
        change(theirs)
        try other.save()
    }

    @Test func aSavedModelOfPlainValuesKeepsNoCopyOfThem() throws {
        let backing = note.persistentBackingData
        #expect(backing.modelHoldsSavedValues && backing.keptSavedValues == nil)
        let sketch = SavedSketch()
        let trip = Trip(name: "Porto")
        context.insert(sketch)
        context.insert(trip)
        try context.save()
        #expect(!sketch.persistentBackingData.modelHoldsSavedValues, "a composite value may hold objects")
        #expect(sketch.persistentBackingData.keptSavedValues?.count == 2)
        #expect(!trip.persistentBackingData.modelHoldsSavedValues, "references can change without a setter")
        #expect(trip.persistentBackingData.keptSavedValues != nil)
    }

    @Test func theFirstWriteKeepsTheSavedValuesAndRollbackRestoresThem() throws {
        note.title = "Porto"
        note.count = 2
        let backing = note.persistentBackingData
        #expect(!backing.modelHoldsSavedValues)
        #expect(backing.keptSavedValues?.first == .string("Lisbon"))
        #expect(context.hasChanges)
        context.rollback()
        #expect(note.title == "Lisbon" && note.count == 1 && !note.hasChanges)
    }

    @Test func aSecondSaveIsWhatRollbackRestores() throws {
        note.count = 2
        try context.save()
        #expect(note.persistentBackingData.modelHoldsSavedValues, "an updated model holds its values again")
        note.count = 3
        note.tags = ["late"]
        context.rollback()
        #expect(note.count == 2 && note.tags.isEmpty)
        #expect(try stored().count == 2)
    }

    @Test func undoPutsBackTheSavedValue() throws {
        let undo = UndoManager()
        context.undoManager = undo
        note.weight = 2.5
        undo.undo()
        #expect(note.weight == 0)
        note.title = "Porto"
        context.rollback()
        #expect(note.title == "Lisbon")
    }

    @Test func aChangeSavedElsewhereIsAConflictOfTheAttributeItChanged() throws {
        try saveElsewhere { $0.count = 5 }
        note.title = "Porto"
        let error = expectError(.conflict) { try context.save() }
        #expect(error?.propertyNames == ["count"])
        context.mergePolicy = .mergeByProperty
        try context.save()
        let now = try stored()
        #expect(now.title == "Porto" && now.count == 5)
        #expect(note.count == 5 && !context.hasChanges)
    }

    @Test func aFetchRefreshesAnUnchangedModelOnlyWhenTheStoreChanged() throws {
        let notified = LockedValue(0)
        withObservationTracking {
            _ = note.count
        } onChange: {
            notified.withLock { $0 += 1 }
        }
        _ = try context.fetch(FetchDescriptor<SavedNote>())
        #expect(notified.withLock { $0 } == 0, "a fetch of what the model holds reloads nothing")
        #expect(note.persistentBackingData.modelHoldsSavedValues)
        try saveElsewhere { $0.count = 7 }
        let fetched = try context.fetch(FetchDescriptor<SavedNote>())
        #expect(fetched.first === note && note.count == 7 && notified.withLock { $0 } == 1)
        note.count = 8
        context.rollback()
        #expect(note.count == 7, "the refreshed values are the saved ones")
    }

    @Test func aFetchOfSomeAttributesRefreshesThoseOfAnUnchangedModel() throws {
        try saveElsewhere {
            $0.title = "Porto"
            $0.count = 9
        }
        var descriptor = FetchDescriptor<SavedNote>()
        descriptor.propertiesToFetch = [\SavedNote.title]
        let fetched = try context.fetch(descriptor)
        #expect(fetched.first === note && note.title == "Porto")
        #expect(note.count == 9, "the attributes left out are read again, current")
    }

    @Test func mergingRefreshesAnUnchangedModel() throws {
        context.automaticallyMergesChanges = true
        try saveElsewhere { $0.weight = 4 }
        context.mergePendingChanges()
        #expect(note.weight == 4)
        note.weight = 1
        context.rollback()
        #expect(note.weight == 4)
    }

    @Test func aDeletedModelInsertedAgainIsStillTheSavedOne() throws {
        context.delete(note)
        context.insert(note)
        #expect(!context.hasChanges && !note.isDeleted)
        try context.save()
        #expect(try ModelContext(container).fetchCount(FetchDescriptor<SavedNote>()) == 1)
    }

    @Test func aDeletedModelChangedThenRolledBackHasItsSavedValues() throws {
        context.delete(note)
        note.title = "Porto"
        context.rollback()
        #expect(note.title == "Lisbon" && !note.isDeleted)
        context.delete(note)
        try context.save()
        #expect(try ModelContext(container).fetchCount(FetchDescriptor<SavedNote>()) == 0)
    }
}
