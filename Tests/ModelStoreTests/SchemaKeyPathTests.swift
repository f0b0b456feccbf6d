import Foundation
import ModelStore
import ModelStoreInMemory
import Testing

/// `Schema.Attribute.keyPath` and `Schema.Relationship.keyPath`: typed key paths handed out by the
/// schema, usable for reading, sorting and filtering in code that knows a property only by its schema entry.
struct SchemaKeyPathTests {
    @Test func everyPropertyOfAModelEntityHasATypedKeyPath() throws {
        let entity = try #require(Schema([Trip.self]).entity(for: Trip.self))
        for attribute in entity.attributes { #expect(attribute.keyPath != nil, "\(attribute.name)") }
        for relationship in entity.relationships { #expect(relationship.keyPath != nil, "\(relationship.name)") }
        let name = try #require(entity.attribute(named: "name")?.keyPath(on: Trip.self, as: String.self))
        let budget = try #require(entity.attribute(named: "budget")?.keyPath(on: Trip.self, as: Double.self))
        #expect(entity.relationship(named: "items")?.keyPath is KeyPath<Trip, [Item]>)
        #expect(entity.relationship(named: "destination")?.keyPath is KeyPath<Trip, Destination?>)
        #expect(entity.attribute(named: "name")?.keyPath(on: Trip.self, as: Double.self) == nil)
        #expect(entity.attribute(named: "name")?.keyPath(on: Item.self, as: String.self) == nil)

        let trip = Trip(name: "Oslo", budget: 120)
        #expect(trip[keyPath: name] == "Oslo")
        #expect(trip[keyPath: budget] == 120)
        trip.budget = 80
        #expect(trip[keyPath: budget] == 80)
    }

    @Test func keyPathsAndLiteralsResolveToTheSameProperty() throws {
        let entity = try #require(Schema([Trip.self]).entity(for: Trip.self))
        let budget = try #require(entity.attribute(named: "budget"))
        #expect(entity.attribute(for: \Trip.budget) == budget)
        #expect(entity.attribute(for: try #require(budget.keyPath)) == budget)
        #expect(entity.relationship(for: \Trip.items)?.name == "items")
        #expect(entity.relationship(for: try #require(entity.relationship(named: "items")?.keyPath))?.name == "items")
        #expect(entity.attribute(for: \Trip.items) == nil)
        #expect(entity.attribute(for: \Trip.scratch) == nil)
        // The same attribute from a second schema hands out an equal key path.
        let again = try #require(Schema([Trip.self]).entity(for: Trip.self)?.attribute(named: "budget"))
        #expect(again.keyPath == budget.keyPath)
    }

    @Test func schemaKeyPathsSortAndFilterFetches() throws {
        let container = try ModelContainer(for: Trip.self, configurations: .inMemory())
        let context = ModelContext(container)
        for (name, budget) in [("Rome", 300.0), ("Oslo", 100), ("Lima", 200)] {
            context.insert(Trip(name: name, budget: budget))
        }
        try context.save()
        let entity = try #require(container.schema.entity(for: Trip.self))
        let budget = try #require(entity.attribute(named: "budget")?.keyPath(on: Trip.self, as: Double.self))
        let name = try #require(entity.attribute(named: "name")?.keyPath(on: Trip.self, as: String.self))

        let sorted = try ModelContext(container).fetch(
            FetchDescriptor<Trip>(sortBy: [SortDescriptor(budget, order: .reverse)]))
        #expect(sorted.map(\.name) == ["Rome", "Lima", "Oslo"])

        // A predicate built by hand from the schema's key path, as generic code would.
        let predicate = Predicate<Trip> { trip in
            PredicateExpressions.build_Comparison(
                lhs: PredicateExpressions.build_KeyPath(root: trip, keyPath: budget),
                rhs: PredicateExpressions.build_Arg(150.0),
                op: .greaterThan)
        }
        let filtered = try ModelContext(container).fetch(
            FetchDescriptor(predicate: predicate, sortBy: [SortDescriptor(name)]))
        #expect(filtered.map(\.name) == ["Lima", "Rome"])
        let plan = try ModelContext(container).explain(FetchDescriptor(predicate: predicate))
        #expect(!plan.evaluatesPredicateOnModels, "the store runs the whole predicate: \(plan)")
    }

    @Test func aRelationshipKeyPathLoadsTheRelatedModels() throws {
        let container = try ModelContainer(for: Trip.self, configurations: .inMemory())
        let context = ModelContext(container)
        context.insert(Trip(name: "Oslo", destination: Destination("Norway"), items: [Item("Boots"), Item("Map")]))
        try context.save()
        let entity = try #require(container.schema.entity(for: Trip.self))
        let items = try #require(entity.relationship(named: "items")?.keyPath as? KeyPath<Trip, [Item]>)
        let destination = try #require(
            entity.relationship(named: "destination")?.keyPath as? KeyPath<Trip, Destination?>)

        let reader = ModelContext(container)
        let fresh = try #require(try reader.fetch(FetchDescriptor<Trip>()).first)
        #expect(Set(fresh[keyPath: items].map(\.title)) == ["Boots", "Map"])
        #expect(fresh[keyPath: destination]?.city == "Norway")
        #expect(fresh.items.count == 2)
    }

    @Test func entitiesReadFromAStoredDescriptionHaveNoKeyPaths() throws {
        let schema = try Schema(Schema([Trip.self]).storedDescription)
        let trip = try #require(schema.entity(named: "Trip"))
        #expect(trip.attributes.allSatisfy { $0.keyPath == nil })
        #expect(trip.relationships.allSatisfy { $0.keyPath == nil })
    }
}
