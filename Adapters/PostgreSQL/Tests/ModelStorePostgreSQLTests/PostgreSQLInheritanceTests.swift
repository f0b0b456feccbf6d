import Foundation
import ModelStore
import ModelStorePostgreSQL
import Testing

/// The root of a class hierarchy stored in one PostgreSQL table.
class Animal: PersistentModel {
    @Attribute(.unique) var name: String = ""
    @Attribute var legs: Int = 4
    @Relationship var shelter: Shelter?

    let persistentBackingData = BackingData()
    required init() {}
}

/// An animal with a breed; puppies are dogs.
class Dog: Animal {
    @Attribute var breed: String = ""
}

/// A young dog.
final class Puppy: Dog {
    @Attribute var weeks: Int = 8
}

/// An animal that may stay indoors.
final class Cat: Animal {
    @Attribute var indoor: Bool = true
}

/// A shelter whose animals are of any class.
final class Shelter: PersistentModel {
    @Attribute var city: String = ""
    @Relationship(deleteRule: .cascade, inverse: \Animal.shelter) var animals: [Animal] = []

    let persistentBackingData = BackingData()
    init() {}
}

/// Model inheritance on PostgreSQL: one table per hierarchy with a class column, type tests in SQL.
@Suite(.enabled(if: PostgreSQLServer.isConfigured, PostgreSQLServer.skipMessage))
struct PostgreSQLInheritanceTests {
    static let schema = Schema([Animal.self, Dog.self, Puppy.self, Cat.self, Shelter.self])

    private func container(_ namespace: String) throws -> ModelContainer {
        try ModelContainer(
            for: Self.schema, configurations: [try PostgreSQLServer.configuration(namespace: namespace)])
    }

    private func seed(_ namespace: String) throws {
        let context = ModelContext(try container(namespace))
        let shelter = Shelter()
        shelter.city = "Bergen"
        context.insert(shelter)
        let rex = Dog()
        rex.name = "rex"
        rex.breed = "collie"
        let bit = Puppy()
        bit.name = "bit"
        bit.breed = "pug"
        bit.weeks = 10
        let tom = Cat()
        tom.name = "tom"
        tom.indoor = false
        let plain = Animal()
        plain.name = "snake"
        plain.legs = 0
        shelter.animals = [rex, bit, tom, plain]
        try context.save()
    }

    @Test func fetchesReturnEachClassAndTypeTestsRunInSQL() throws {
        let namespace = PostgreSQLServer.freshNamespace("inherit")
        try seed(namespace)
        let context = ModelContext(try container(namespace))
        let all = try context.fetch(FetchDescriptor<Animal>(sortBy: [SortDescriptor(\.name)]))
        #expect(all.map(\.name) == ["bit", "rex", "snake", "tom"])
        #expect(all.map { String(describing: type(of: $0)) } == ["Puppy", "Dog", "Animal", "Cat"])
        #expect((all[0] as? Puppy)?.weeks == 10 && (all[0] as? Puppy)?.breed == "pug")
        #expect((all[3] as? Cat)?.indoor == false)
        #expect(
            try context.fetch(FetchDescriptor<Dog>(sortBy: [SortDescriptor(\.name)])).map(\.name) == ["bit", "rex"])
        #expect(try context.fetchCount(FetchDescriptor<Cat>()) == 1)

        let dogs = FetchDescriptor<Animal>(predicate: #Predicate { $0 is Dog }, sortBy: [SortDescriptor(\.name)])
        #expect(try context.fetch(dogs).map(\.name) == ["bit", "rex"])
        let explanation = try context.explain(dogs)
        #expect(explanation.conditions.allSatisfy { $0.location == .store && !$0.isInexact })
        #expect(!explanation.evaluatesPredicateOnModels)
        #expect("\(explanation)".contains(Schema.Entity.classAttributeName))

        let shelter = try #require(try context.fetch(FetchDescriptor<Shelter>()).first)
        #expect(Set(shelter.animals.map(\.name)) == ["bit", "rex", "snake", "tom"])
    }

    @Test func deletesHonourIncludeSubclassesAndCascadeAcrossClasses() throws {
        let namespace = PostgreSQLServer.freshNamespace("inherit")
        try seed(namespace)
        let context = ModelContext(try container(namespace))
        try context.delete(model: Dog.self, includeSubclasses: false)
        #expect(try context.fetch(FetchDescriptor<Dog>()).map(\.name) == ["bit"])
        let shelter = try #require(try context.fetch(FetchDescriptor<Shelter>()).first)
        context.delete(shelter)
        try context.save()
        #expect(try ModelContext(try container(namespace)).fetchCount(FetchDescriptor<Animal>()) == 0)
    }
}
