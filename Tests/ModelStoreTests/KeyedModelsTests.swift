import ModelStoreTestSupport
import Testing

@testable import ModelStore

/// The registry's pages of models by integer key, driven by seeded random operations and checked
/// after each against a dictionary. Keys are drawn from a few runs (one negative, one far away) in
/// two stores and two entities, so namespaces move from their hash table to pages, and operations
/// cross pages, empty them (which drops the page and moves the last one into its place) and come
/// back; a failure is shrunk and printed.
struct KeyedModelsTests {
    struct Key: Hashable, CustomStringConvertible {
        let store: String
        let entity: String
        let key: Int64

        var description: String { "\(store)/\(entity)/\(key)" }
    }

    enum Operation: CustomStringConvertible {
        case register(Key)
        case remove(Key)

        var description: String {
            switch self {
            case .register(let key): ".register(\(key))"
            case .remove(let key): ".remove(\(key))"
            }
        }
    }

    static func randomKey(_ random: inout SplitMix64) -> Key {
        let stores = ["store-a", "a-much-longer-store-identifier-on-the-heap"]
        let entities = ["Kitchen", "Trip"]
        // Each namespace mostly draws from its own run of 64 keys, which straddles a page boundary
        // (so it becomes dense, and paged, after a few registrations); one key in ten comes from
        // anywhere, so pages are also made far apart, and some namespaces never become dense.
        let clusters: [Int64] = [220, -290, (1 << 40) + 240, 500]
        let space = Int(random.next() % 4)
        let cluster = random.next() % 10 == 0 ? clusters[Int(random.next() % 4)] : clusters[space]
        let key = cluster + Int64(random.next() % 64)
        return Key(store: stores[space % 2], entity: entities[space / 2], key: key)
    }

    static func randomOperations(seed: UInt64, count: Int) -> [Operation] {
        var random = SplitMix64(seed: seed)
        var recent: [Key] = []
        return (0..<count).map { _ in
            // Removals mostly of keys registered before, so that pages empty.
            if random.next() % 5 < 2, !recent.isEmpty {
                return .remove(recent[Int(random.next() % UInt64(recent.count))])
            }
            let key = randomKey(&random)
            recent.append(key)
            return .register(key)
        }
    }

    /// Runs the operations; the first disagreement with the dictionary, or `nil`. Namespaces move
    /// from their hash table to pages at `pagingThreshold` models when their keys are dense.
    static func run(_ operations: [Operation], pagingThreshold: Int = 16) -> String? {
        var pages = KeyedModels(pagingThreshold: pagingThreshold)
        var model: [Key: Kitchen] = [:]
        for (step, operation) in operations.enumerated() {
            switch operation {
            case .register(let key):
                let object = Kitchen()
                let earlier = pages.update(
                    object, scope: PersistentIdentifier.Scope(storeIdentifier: key.store, entityName: key.entity),
                    key: key.key)
                if earlier.map(ObjectIdentifier.init) != model[key].map(ObjectIdentifier.init) {
                    return "step \(step) \(operation): returned a different earlier model"
                }
                model[key] = object
            case .remove(let key):
                let removed = pages.remove(
                    scope: PersistentIdentifier.Scope(storeIdentifier: key.store, entityName: key.entity), key: key.key)
                if removed.map(ObjectIdentifier.init) != model.removeValue(forKey: key).map(ObjectIdentifier.init) {
                    return "step \(step) \(operation): removed a different model"
                }
            }
            if pages.count != model.count {
                return "step \(step) \(operation): \(pages.count) models, the dictionary has \(model.count)"
            }
            for (key, object) in model {
                let found = pages.model(
                    scope: PersistentIdentifier.Scope(storeIdentifier: key.store, entityName: key.entity), key: key.key)
                if found.map(ObjectIdentifier.init) != ObjectIdentifier(object) {
                    return "step \(step) \(operation): \(key) is not found"
                }
            }
            var walked = 0
            var misfiled: String?
            pages.forEachModel { id, object in
                walked += 1
                guard case .int(let number) = id.primaryKey, let store = id.storeIdentifier,
                    model[Key(store: store, entity: id.entityName, key: number)] === object as? Kitchen
                else {
                    misfiled = "\(id)"
                    return
                }
            }
            if let misfiled { return "step \(step) \(operation): the walk gave \(misfiled) a model not under it" }
            if walked != model.count { return "step \(step) \(operation): the walk gave \(walked) models" }
        }
        return nil
    }

    @Test(arguments: 0..<12)
    func randomOperationsAgreeWithADictionary(seed: Int) {
        let operations = Self.randomOperations(seed: UInt64(seed), count: 300)
        // Paged early (16 models), and never (the registry's own threshold is not reached here).
        for threshold in [16, 4096] {
            let run = { Self.run($0, pagingThreshold: threshold) }
            if let report = Shrinker.failureReport(seed: UInt64(seed), operations, run: run) {
                Issue.record("paging at \(threshold) models: \(report)")
            }
        }
    }

    /// Emptying a page that is not the last moves the last page into its place; both stay found.
    @Test func emptyingAnEarlierPageKeepsTheLastOneFound() {
        let a = Key(store: "s", entity: "Kitchen", key: 5)
        let b = Key(store: "s", entity: "Kitchen", key: 300)
        let c = Key(store: "s", entity: "Kitchen", key: 900)
        let operations: [Operation] = [.register(a), .register(b), .register(c), .remove(a), .register(a), .remove(b)]
        #expect(Self.run(operations, pagingThreshold: 1) == nil)
    }
}
