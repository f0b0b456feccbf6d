import Foundation
import ModelStore
import ModelStoreTestSupport
import Testing

/// A store written before inverses were inferred holds the two sides of a pair apart; opening it
/// with the inferred pair migrates it.
struct InferredInverseUpgradeTests {
    @Test(arguments: StoreKind.allCases.filter(\.isDurable))
    func aStoreSavedWithoutThePairOpensWithIt(_ kind: StoreKind) throws {
        let folder = try TemporaryDirectory()
        var description = Schema([School.self, Student.self]).storedDescription
        for entity in description.entities.indices {
            for property in description.entities[entity].properties.indices {
                description.entities[entity].properties[property].inverse = nil
            }
        }
        let before = try Schema(description)
        #expect(before.entity(named: "Student")?.relationship(named: "school")?.inverseName == nil)
        do {
            let container = try ModelContainer(for: before, configurations: [kind.configuration(in: folder.url)])
            let store = container.stores[0]
            let school = try #require(before.entity(named: "School"))
            let student = try #require(before.entity(named: "Student"))
            let schoolID = PersistentIdentifier.temporary(entityName: "School")
            let adaID = PersistentIdentifier.temporary(entityName: "Student")
            let graceID = PersistentIdentifier.temporary(entityName: "Student")
            let request = DataStoreSaveChangesRequest<DefaultSnapshot>(
                editingState: EditingState(),
                inserted: [
                    try DefaultSnapshot(
                        persistentIdentifier: schoolID, entity: school,
                        namedValues: ["name": .string("Hilltop"), "students": .references([adaID, graceID])]),
                    try DefaultSnapshot(
                        persistentIdentifier: adaID, entity: student,
                        namedValues: ["name": .string("Ada"), "school": .reference(schoolID)]),
                    try DefaultSnapshot(
                        persistentIdentifier: graceID, entity: student,
                        namedValues: ["name": .string("Grace"), "school": .reference(schoolID)]),
                ], updated: [], deleted: [])
            func save<Store: DataStore>(_ store: Store) throws {
                _ = try store.save(try #require(request as? DataStoreSaveChangesRequest<Store.Snapshot>))
            }
            try save(store)
        }
        let container = try ModelContainer(
            for: Schema([School.self, Student.self]), configurations: [kind.configuration(in: folder.url)])
        let context = ModelContext(container)
        let school = try #require(try context.fetch(FetchDescriptor<School>()).first)
        #expect(school.students.map(\.name).sorted() == ["Ada", "Grace"])
        #expect(try context.fetch(FetchDescriptor<Student>()).allSatisfy { $0.school === school })
    }
}
