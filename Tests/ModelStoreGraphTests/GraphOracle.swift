import Foundation

/// A step of a randomized session on the graph models. Objects are named by their kind and their
/// position among the live (not deleted) objects of that kind, taken modulo their count, so a step
/// stays meaningful when shrinking removes the steps before it.
enum GraphStep: Equatable, Sendable, CustomStringConvertible {
    case insertOwner(name: String)
    case insertPet(name: String, weight: Double, owner: Int?)
    case insertToy(label: String)
    case delete(GraphKind, Int)
    case setOwner(pet: Int, owner: Int?)
    case adoptPet(owner: Int, pet: Int)
    case releasePet(owner: Int, pet: Int)
    case addToy(pet: Int, toy: Int, fromToySide: Bool)
    case removeToy(pet: Int, toy: Int, fromToySide: Bool)
    case setWeight(pet: Int, Double)
    case setName(pet: Int, String)
    case save
    case rollback
    case reopen
    case fetchPets(PetQuery)

    /// The step as Swift source, for pasting a shrunk failure into a regression test.
    var description: String {
        switch self {
        case .insertOwner(let name): ".insertOwner(name: \(code(name)))"
        case .insertPet(let name, let weight, let owner):
            ".insertPet(name: \(code(name)), weight: \(code(weight)), owner: \(owner.map(String.init) ?? "nil"))"
        case .insertToy(let label): ".insertToy(label: \(code(label)))"
        case .delete(let kind, let index): ".delete(.\(kind), \(index))"
        case .setOwner(let pet, let owner): ".setOwner(pet: \(pet), owner: \(owner.map(String.init) ?? "nil"))"
        case .adoptPet(let owner, let pet): ".adoptPet(owner: \(owner), pet: \(pet))"
        case .releasePet(let owner, let pet): ".releasePet(owner: \(owner), pet: \(pet))"
        case .addToy(let pet, let toy, let side): ".addToy(pet: \(pet), toy: \(toy), fromToySide: \(side))"
        case .removeToy(let pet, let toy, let side): ".removeToy(pet: \(pet), toy: \(toy), fromToySide: \(side))"
        case .setWeight(let pet, let weight): ".setWeight(pet: \(pet), \(code(weight)))"
        case .setName(let pet, let name): ".setName(pet: \(pet), \(code(name)))"
        case .save: ".save"
        case .rollback: ".rollback"
        case .reopen: ".reopen"
        case .fetchPets(let query): ".fetchPets(\(query))"
        }
    }
}

/// The model types of the session.
enum GraphKind: String, Sendable, CaseIterable {
    case owner, pet, toy
}

/// A fetch of pets: an optional predicate, an order by key, a window.
struct PetQuery: Equatable, Sendable, CustomStringConvertible {
    enum Filter: Equatable, Sendable {
        case weightAbove(Double)
        case weightEquals(Double)
        case weightNotEquals(Double)
        case nameEquals(String)
        case withoutOwner
    }
    var filter: Filter?
    /// Sort by name first (SortDescriptor's default string comparator), then by key.
    var byName = false
    var descending = false
    var offset: Int?
    var limit: Int?

    var description: String {
        let filter: String
        switch self.filter {
        case nil: filter = "nil"
        case .weightAbove(let value): filter = ".weightAbove(\(code(value)))"
        case .weightEquals(let value): filter = ".weightEquals(\(code(value)))"
        case .weightNotEquals(let value): filter = ".weightNotEquals(\(code(value)))"
        case .nameEquals(let name): filter = ".nameEquals(\(code(name)))"
        case .withoutOwner: filter = ".withoutOwner"
        }
        let offset = self.offset.map(String.init) ?? "nil"
        let limit = self.limit.map(String.init) ?? "nil"
        return
            "PetQuery(filter: \(filter), byName: \(byName), descending: \(descending), offset: \(offset), limit: \(limit))"
    }

    /// Whether a pet passes the filter, with Swift's semantics (NaN compares false, strings by canonical equivalence).
    func matches(_ pet: GraphOracle.Object) -> Bool {
        switch filter {
        case nil: true
        case .weightAbove(let value): pet.weight > value
        case .weightEquals(let value): pet.weight == value
        case .weightNotEquals(let value): pet.weight != value
        case .nameEquals(let name): pet.name == name
        case .withoutOwner: pet.owner == nil
        }
    }
}

/// A Swift literal for a double, `-0.0`, NaN and infinities included.
func code(_ value: Double) -> String {
    if value.isNaN { return ".nan" }
    if value.isInfinite { return value < 0 ? "-.infinity" : ".infinity" }
    if value == 0 { return value.sign == .minus ? "-0.0" : "0.0" }
    return "\(value)"
}

/// A Swift literal for a string, with every non-ASCII scalar escaped so equivalent spellings stay apart.
func code(_ string: String) -> String {
    let body = string.unicodeScalars.map { scalar in
        scalar.isASCII && scalar != "\"" && scalar != "\\" ? String(scalar) : "\\u{\(String(scalar.value, radix: 16))}"
    }.joined()
    return "\"\(body)\""
}

/// The expected state, in plain Swift: what the stored and the in-memory graph must be after each step.
///
/// Relationships live on the pet's side (its owner, its toys); `Owner.pets` and `Toy.pets` are
/// the inverses, derived from them.
struct GraphOracle {
    struct Object: Equatable {
        let kind: GraphKind
        let key: Int
        var name: String
        var weight: Double = 0
        var owner: Int?
        var toys: Set<Int> = []

        static func == (lhs: Object, rhs: Object) -> Bool {
            lhs.kind == rhs.kind && lhs.key == rhs.key
                && Array(lhs.name.unicodeScalars) == Array(rhs.name.unicodeScalars)
                && lhs.weight.bitPattern == rhs.weight.bitPattern && lhs.owner == rhs.owner && lhs.toys == rhs.toys
        }
    }

    private(set) var committed: [Int: Object] = [:]
    private(set) var working: [Int: Object] = [:]
    private(set) var deleted: Set<Int> = []
    private var nextKey = 1

    /// The live objects of a kind (not pending deletion), by key.
    func live(_ kind: GraphKind) -> [Object] {
        working.values.filter { $0.kind == kind && !deleted.contains($0.key) }.sorted { $0.key < $1.key }
    }

    /// The key of the live object at a position, taken modulo the count; `nil` if there is none.
    func key(_ kind: GraphKind, _ index: Int) -> Int? {
        let objects = live(kind)
        return objects.isEmpty ? nil : objects[index % objects.count].key
    }

    /// Applies a step; returns the key of an inserted object.
    @discardableResult
    mutating func apply(_ step: GraphStep) -> Int? {
        switch step {
        case .insertOwner(let name):
            return insert(Object(kind: .owner, key: nextKey, name: name))
        case .insertPet(let name, let weight, let owner):
            let ownerKey = owner.flatMap { key(.owner, $0) }
            return insert(Object(kind: .pet, key: nextKey, name: name, weight: weight, owner: ownerKey))
        case .insertToy(let label):
            return insert(Object(kind: .toy, key: nextKey, name: label))
        case .delete(let kind, let index):
            if let key = key(kind, index) { deleted.insert(key) }
        case .setOwner(let pet, let owner):
            let ownerKey = owner.flatMap { key(.owner, $0) }
            if let pet = key(.pet, pet) { working[pet]?.owner = ownerKey }
        case .adoptPet(let owner, let pet):
            let ownerKey = key(.owner, owner)
            if let ownerKey, let pet = key(.pet, pet) { working[pet]?.owner = ownerKey }
        case .releasePet(let owner, let pet):
            let ownerKey = key(.owner, owner)
            if let ownerKey, let pet = key(.pet, pet), working[pet]?.owner == ownerKey { working[pet]?.owner = nil }
        case .addToy(let pet, let toy, _):
            if let pet = key(.pet, pet), let toy = key(.toy, toy) { working[pet]?.toys.insert(toy) }
        case .removeToy(let pet, let toy, _):
            if let pet = key(.pet, pet), let toy = key(.toy, toy) { working[pet]?.toys.remove(toy) }
        case .setWeight(let pet, let weight):
            if let pet = key(.pet, pet) { working[pet]?.weight = weight }
        case .setName(let pet, let name):
            if let pet = key(.pet, pet) { working[pet]?.name = name }
        case .save:
            save()
        case .rollback, .reopen:
            working = committed
            deleted = []
        case .fetchPets:
            break
        }
        return nil
    }

    private mutating func insert(_ object: Object) -> Int {
        working[object.key] = object
        nextKey += 1
        return object.key
    }

    /// Deletes the pending deletions and what their owners' cascade reaches, then removes every
    /// reference to a deleted object; the result is what is stored.
    private mutating func save() {
        var gone = deleted
        for pet in working.values where pet.kind == .pet {
            if let owner = pet.owner, gone.contains(owner) { gone.insert(pet.key) }
        }
        for key in gone { working[key] = nil }
        for key in working.keys {
            if let owner = working[key]?.owner, gone.contains(owner) { working[key]?.owner = nil }
            working[key]?.toys.subtract(gone)
        }
        deleted = []
        committed = working
    }

    /// The keys of the pets a fetch returns, in order, counting pending changes.
    func fetch(_ query: PetQuery) -> [Int] {
        var pets = live(.pet).filter(query.matches)
        if query.byName {
            // The same default string comparator `SortDescriptor(\Pet.name)` gets.
            let byName = SortDescriptor(\Object.name)
            pets.sort { lhs, rhs in
                switch byName.compare(lhs, rhs) {
                case .orderedAscending: return true
                case .orderedDescending: return false
                case .orderedSame: return lhs.key < rhs.key
                }
            }
        }
        var keys = pets.map(\.key)
        if query.descending { keys.reverse() }
        let offset = min(query.offset ?? 0, keys.count)
        keys = Array(keys[offset...])
        if let limit = query.limit { keys = Array(keys.prefix(limit)) }
        return keys
    }

    /// The working state as the app sees it, inverses included, for comparison with the models.
    func view() -> GraphView {
        GraphView(objects: working.filter { !deleted.contains($0.key) }, all: working)
    }
}

/// The graph as seen from every side: each object's attributes and both sides of each relationship.
struct GraphView: Equatable, CustomStringConvertible {
    /// Attributes and the pet-side relationships, by key.
    var objects: [Int: GraphOracle.Object]
    /// `Owner.pets` and `Toy.pets`, by key of the owner or toy.
    var inverses: [Int: Set<Int>]

    init(objects: [Int: GraphOracle.Object], inverses: [Int: Set<Int>]) {
        self.objects = objects
        self.inverses = inverses
    }

    /// The view of an oracle state: inverses derived from the pets of `all`.
    init(objects: [Int: GraphOracle.Object], all: [Int: GraphOracle.Object]) {
        self.objects = objects
        var inverses: [Int: Set<Int>] = [:]
        for object in objects.values where object.kind != .pet { inverses[object.key] = [] }
        for pet in all.values where pet.kind == .pet {
            if let owner = pet.owner, inverses[owner] != nil { inverses[owner]?.insert(pet.key) }
            for toy in pet.toys where inverses[toy] != nil { inverses[toy]?.insert(pet.key) }
        }
        self.inverses = inverses
    }

    var description: String {
        objects.keys.sorted().map { key in
            let object = objects[key]!
            switch object.kind {
            case .pet:
                return
                    "pet \(key) \(code(object.name)) \(code(object.weight)) owner \(object.owner.map(String.init) ?? "nil") toys \(object.toys.sorted())"
            case .owner, .toy:
                return "\(object.kind) \(key) \(code(object.name)) pets \(inverses[key]?.sorted() ?? [])"
            }
        }.joined(separator: "; ")
    }
}
