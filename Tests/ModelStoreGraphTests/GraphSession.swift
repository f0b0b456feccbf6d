import Foundation
import ModelStore

/// Runs graph steps against a real store and the oracle side by side, and reports the first
/// difference: in a fetch, in the models after a save, a rollback or a reopen, or an error.
final class GraphSession {
    let kind: StoreKind
    private var store: StoreUnderTest
    private var context: ModelContext
    private var oracle = GraphOracle()
    private var models: [Int: any PersistentModel] = [:]

    init(_ kind: StoreKind) throws {
        self.kind = kind
        store = try StoreUnderTest(kind)
        context = ModelContext(store.container)
    }

    /// Runs every step; returns a description of the first difference, or `nil` when there is none.
    static func firstDifference(_ steps: [GraphStep], on kind: StoreKind) -> String? {
        do {
            let session = try GraphSession(kind)
            for (index, step) in steps.enumerated() {
                if let difference = try session.run(step) { return "step \(index) \(step): \(difference)" }
            }
            return try session.compareModels(after: "the last step")
        } catch {
            return "threw \(error)"
        }
    }

    private func run(_ step: GraphStep) throws -> String? {
        let keyBefore = oracle
        let inserted = oracle.apply(step)
        switch step {
        case .insertOwner(let name):
            let owner = Owner(name)
            owner.key = inserted!
            context.insert(owner)
            models[owner.key] = owner
        case .insertPet(let name, let weight, let ownerIndex):
            let pet = Pet(name, weight: weight)
            pet.key = inserted!
            if let ownerIndex, let key = keyBefore.key(.owner, ownerIndex) {
                pet.owner = try model(key, as: Owner.self)
            }
            context.insert(pet)
            models[pet.key] = pet
        case .insertToy(let label):
            let toy = Toy(label)
            toy.key = inserted!
            context.insert(toy)
            models[toy.key] = toy
        case .delete(let kind, let index):
            guard let key = keyBefore.key(kind, index) else { break }
            let model = try require(models[key], key)
            func delete<M: PersistentModel>(_ model: M) { context.delete(model) }
            delete(model)
        case .setOwner(let petIndex, let ownerIndex):
            guard let petKey = keyBefore.key(.pet, petIndex) else { break }
            let owner = try ownerIndex.flatMap { keyBefore.key(.owner, $0) }.map { try model($0, as: Owner.self) }
            try model(petKey, as: Pet.self).owner = owner
        case .adoptPet(let ownerIndex, let petIndex):
            guard let ownerKey = keyBefore.key(.owner, ownerIndex), let petKey = keyBefore.key(.pet, petIndex) else {
                break
            }
            try model(ownerKey, as: Owner.self).pets.append(try model(petKey, as: Pet.self))
        case .releasePet(let ownerIndex, let petIndex):
            guard let ownerKey = keyBefore.key(.owner, ownerIndex), let petKey = keyBefore.key(.pet, petIndex) else {
                break
            }
            let pet = try model(petKey, as: Pet.self)
            try model(ownerKey, as: Owner.self).pets.removeAll { $0 === pet }
        case .addToy(let petIndex, let toyIndex, let fromToySide):
            guard let petKey = keyBefore.key(.pet, petIndex), let toyKey = keyBefore.key(.toy, toyIndex) else { break }
            let pet = try model(petKey, as: Pet.self)
            let toy = try model(toyKey, as: Toy.self)
            if fromToySide { toy.pets.append(pet) } else { pet.toys.append(toy) }
        case .removeToy(let petIndex, let toyIndex, let fromToySide):
            guard let petKey = keyBefore.key(.pet, petIndex), let toyKey = keyBefore.key(.toy, toyIndex) else { break }
            let pet = try model(petKey, as: Pet.self)
            let toy = try model(toyKey, as: Toy.self)
            if fromToySide { toy.pets.removeAll { $0 === pet } } else { pet.toys.removeAll { $0 === toy } }
        case .setWeight(let petIndex, let weight):
            guard let key = keyBefore.key(.pet, petIndex) else { break }
            try model(key, as: Pet.self).weight = weight
        case .setName(let petIndex, let name):
            guard let key = keyBefore.key(.pet, petIndex) else { break }
            try model(key, as: Pet.self).name = name
        case .save:
            try context.save()
            models = models.filter { oracle.working[$0.key] != nil }
            return try compareModels(after: "the save")
        case .rollback:
            context.rollback()
            models = models.filter { oracle.working[$0.key] != nil }
            return try compareModels(after: "the rollback")
        case .reopen:
            context = ModelContext(try store.reopen())
            models = [:]
            for owner in try context.fetch(FetchDescriptor<Owner>()) { models[owner.key] = owner }
            for pet in try context.fetch(FetchDescriptor<Pet>()) { models[pet.key] = pet }
            for toy in try context.fetch(FetchDescriptor<Toy>()) { models[toy.key] = toy }
            return try compareModels(after: "reopening")
        case .fetchPets(let query):
            let found = try context.fetch(descriptor(for: query)).map(\.key)
            let expected = oracle.fetch(query)
            if found != expected { return "the fetch returned pets \(found), expected \(expected)" }
        }
        return nil
    }

    /// The descriptor for a pet query, with the predicate the filter names.
    private func descriptor(for query: PetQuery) -> FetchDescriptor<Pet> {
        let predicate: Predicate<Pet>?
        switch query.filter {
        case nil: predicate = nil
        case .weightAbove(let value): predicate = #Predicate<Pet> { $0.weight > value }
        case .weightEquals(let value): predicate = #Predicate<Pet> { $0.weight == value }
        case .weightNotEquals(let value): predicate = #Predicate<Pet> { $0.weight != value }
        case .nameEquals(let name): predicate = #Predicate<Pet> { $0.name == name }
        case .withoutOwner: predicate = #Predicate<Pet> { $0.owner == nil }
        }
        let order: SortOrder = query.descending ? .reverse : .forward
        let sort =
            query.byName
            ? [SortDescriptor(\Pet.name, order: order), SortDescriptor(\Pet.key, order: order)]
            : [SortDescriptor(\Pet.key, order: order)]
        var descriptor = FetchDescriptor<Pet>(predicate: predicate, sortBy: sort)
        descriptor.fetchOffset = query.offset
        descriptor.fetchLimit = query.limit
        return descriptor
    }

    /// Compares what the models show with the oracle's working state; `nil` when they agree.
    func compareModels(after what: String) throws -> String? {
        let expected = oracle.view()
        var objects: [Int: GraphOracle.Object] = [:]
        var inverses: [Int: Set<Int>] = [:]
        for key in expected.objects.keys {
            guard let model = models[key] else { return "after \(what) the model with key \(key) is missing" }
            switch model {
            case let pet as Pet:
                objects[key] = GraphOracle.Object(
                    kind: .pet, key: pet.key, name: pet.name, weight: pet.weight, owner: pet.owner?.key,
                    toys: Set(pet.toys.map(\.key)))
            case let owner as Owner:
                objects[key] = GraphOracle.Object(kind: .owner, key: owner.key, name: owner.name)
                inverses[key] = Set(owner.pets.map(\.key))
            case let toy as Toy:
                objects[key] = GraphOracle.Object(kind: .toy, key: toy.key, name: toy.label)
                inverses[key] = Set(toy.pets.map(\.key))
            default:
                return "after \(what) key \(key) holds an unexpected model"
            }
        }
        let found = GraphView(objects: objects, inverses: inverses)
        return found == expected ? nil : "after \(what) the models show\n  \(found)\nexpected\n  \(expected)"
    }

    private func model<M: PersistentModel>(_ key: Int, as type: M.Type) throws -> M {
        guard let model = models[key] as? M else {
            throw DataStoreError(.notFound, "the session has no \(M.self) with key \(key)")
        }
        return model
    }

    private func require(_ model: (any PersistentModel)?, _ key: Int) throws -> any PersistentModel {
        guard let model else { throw DataStoreError(.notFound, "the session has no model with key \(key)") }
        return model
    }
}
