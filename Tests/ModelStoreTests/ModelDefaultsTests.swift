import Foundation
import ModelStore
import ModelStoreInMemory
import Testing

/// The pattern "Defining models" gives for defaults: the properties hold them, and the convenience
/// initializer's default arguments name the same constants.
private final class PlannedStop: PersistentModel {
    static let defaultPriority = 2
    @Attribute var name: String = ""
    @Attribute var priority: Int = PlannedStop.defaultPriority

    let persistentBackingData = BackingData()
    init() {}

    convenience init(name: String, priority: Int = PlannedStop.defaultPriority) {
        self.init()
        self.name = name
        self.priority = priority
    }
}

struct ModelDefaultsTests {
    @Test func bothInitializersAndAFetchedModelHaveTheOneDefault() throws {
        #expect(PlannedStop().priority == 2)
        #expect(PlannedStop(name: "Rome").priority == 2)
        #expect(PlannedStop(name: "Oslo", priority: 5).priority == 5)

        let container = try ModelContainer(for: PlannedStop.self, configurations: .inMemory())
        let context = ModelContext(container)
        context.insert(PlannedStop())
        context.insert(PlannedStop(name: "Rome"))
        try context.save()
        let fetched = try ModelContext(container).fetch(FetchDescriptor<PlannedStop>(sortBy: [SortDescriptor(\.name)]))
        #expect(fetched.map(\.priority) == [2, 2])
    }
}
