import Foundation
import ModelStore
import ModelStoreInMemory
import ModelStoreTestSupport
import Testing

/// Seeded runs of inserts, deletes, saves, resets, fetches and look-ups by temporary and permanent
/// identifiers on one context, checked after every step against a plain model of which model object
/// the context must hand out for each identifier. The context files a new model under its temporary
/// identifier only when a look-up needs it (``ModelContext/registeredModel(for:as:)`` by that
/// identifier, a delete, a reset), and under its permanent one at the save; these runs mix those
/// orders. A failure is shrunk to a short list of steps and printed.
///
/// `MODELSTORE_REGISTRY_SEEDS=N` runs N seeds (the long run; `swift test` runs a few).
@MainActor
struct ContextRegistryRandomizedTests {
    nonisolated static var seeds: [UInt64] {
        let count = ProcessInfo.processInfo.environment["MODELSTORE_REGISTRY_SEEDS"].flatMap(Int.init) ?? 12
        return (0..<UInt64(count)).map { 0x2E61_5700 + $0 }
    }

    /// One step; `pick` chooses among the models inserted so far (modulo their number), so a shrunk
    /// sequence that lost an insert still runs.
    enum Step: CustomStringConvertible {
        case insert(count: Int)
        case delete(pick: Int)
        case edit(pick: Int)
        case lookUpTemporary(pick: Int)
        case lookUpPermanent(pick: Int)
        case save
        case reset
        case fetchAll

        var description: String {
            switch self {
            case .insert(let count): "insert(\(count))"
            case .delete(let pick): "delete(\(pick))"
            case .edit(let pick): "edit(\(pick))"
            case .lookUpTemporary(let pick): "lookUpTemporary(\(pick))"
            case .lookUpPermanent(let pick): "lookUpPermanent(\(pick))"
            case .save: "save"
            case .reset: "reset"
            case .fetchAll: "fetchAll"
            }
        }

        static func random(_ rng: inout SplitMix64) -> Step {
            let pick = Int.random(in: 0..<1000, using: &rng)
            switch Int.random(in: 0..<20, using: &rng) {
            // Some inserts are large, so a save crosses the sizes where the context changes approach.
            case 0...3: return .insert(count: Bool.random(using: &rng) ? 1 : Int.random(in: 50..<150, using: &rng))
            case 4...5: return .delete(pick: pick)
            case 6...7: return .edit(pick: pick)
            case 8...10: return .lookUpTemporary(pick: pick)
            case 11...13: return .lookUpPermanent(pick: pick)
            case 14...16: return .save
            case 17: return .reset
            default: return .fetchAll
            }
        }
    }

    /// Where the plain model has each inserted model.
    enum State { case new, saved, deletedNew, deletedSaved, gone, forgotten }

    struct Tracked {
        var object: Item
        let temporary: PersistentIdentifier
        var permanent: PersistentIdentifier?
        var state: State
        var isEdited = false
    }

    /// Runs the steps; returns a description of the first disagreement, or `nil`.
    static func run(_ steps: [Step]) -> String? {
        do {
            let container = try ModelContainer(for: Item.self, configurations: .inMemory())
            let context = ModelContext(container)
            var models: [Tracked] = []
            var next = 0
            for (number, step) in steps.enumerated() {
                let at = "step \(number) (\(step))"
                switch step {
                case .insert(let count):
                    for _ in 0..<count {
                        let item = Item("item \(next)", quantity: next)
                        next += 1
                        context.insert(item)
                        models.append(Tracked(object: item, temporary: item.persistentModelID, state: .new))
                    }
                case .delete(let pick):
                    guard !models.isEmpty else { continue }
                    let index = pick % models.count
                    switch models[index].state {
                    case .new: models[index].state = .deletedNew
                    case .saved: models[index].state = .deletedSaved
                    default: continue
                    }
                    context.delete(models[index].object)
                case .edit(let pick):
                    guard !models.isEmpty else { continue }
                    let index = pick % models.count
                    guard models[index].state == .saved || models[index].state == .new else { continue }
                    models[index].object.quantity += 1
                    if models[index].state == .saved { models[index].isEdited = true }
                case .lookUpTemporary(let pick):
                    guard !models.isEmpty else { continue }
                    let tracked = models[pick % models.count]
                    let found = context.registeredModel(for: tracked.temporary, as: Item.self)
                    let expected = tracked.state == .new || tracked.state == .deletedNew
                    if expected ? found !== tracked.object : found != nil {
                        return "\(at): by its temporary identifier the \(tracked.state) model was "
                            + (found == nil ? "not found" : "found")
                    }
                case .lookUpPermanent(let pick):
                    guard !models.isEmpty else { continue }
                    let tracked = models[pick % models.count]
                    guard let permanent = tracked.permanent else { continue }
                    let found = context.registeredModel(for: permanent, as: Item.self)
                    let expected = tracked.state == .saved || tracked.state == .deletedSaved
                    if expected ? found !== tracked.object : found != nil {
                        return "\(at): by its permanent identifier the \(tracked.state) model was "
                            + (found == nil ? "not found" : "found")
                    }
                case .save:
                    try context.save()
                    for index in models.indices {
                        switch models[index].state {
                        case .new:
                            let id = models[index].object.persistentModelID
                            if id.isTemporary { return "\(at): a saved model kept its temporary identifier" }
                            models[index].permanent = id
                            models[index].state = .saved
                        case .deletedNew, .deletedSaved: models[index].state = .gone
                        default: break
                        }
                        models[index].isEdited = false
                    }
                    if !context.insertedModelsArray.isEmpty { return "\(at): inserted models are left after the save" }
                case .reset:
                    context.reset()
                    for index in models.indices where models[index].state == .saved && !models[index].isEdited {
                        models[index].state = .forgotten
                    }
                case .fetchAll:
                    let fetched = try context.fetch(FetchDescriptor<Item>())
                    let byID = Dictionary(uniqueKeysWithValues: fetched.map { ($0.persistentModelID, $0) })
                    for index in models.indices {
                        guard let permanent = models[index].permanent else { continue }
                        switch models[index].state {
                        case .saved:
                            if byID[permanent] !== models[index].object {
                                return "\(at): the fetch did not return the registered object of \(permanent)"
                            }
                        case .forgotten:
                            guard let object = byID[permanent] else {
                                return "\(at): the fetch lost the forgotten model \(permanent)"
                            }
                            if object === models[index].object {
                                return "\(at): the fetch returned the object reset() let go of"
                            }
                            models[index].object = object
                            models[index].state = .saved
                        case .gone:
                            if byID[permanent] != nil { return "\(at): the fetch returned the deleted \(permanent)" }
                        default: break
                        }
                    }
                }
            }
            return nil
        } catch {
            return "threw \(error)"
        }
    }

    @Test(arguments: seeds)
    func theContextHandsOutTheModelThePlainModelExpects(seed: UInt64) {
        var rng = SplitMix64(seed: seed)
        let steps = (0..<80).map { _ in Step.random(&rng) }
        guard let failure = Self.run(steps) else { return }
        let shrunk = Shrinker.shrink(steps) { Self.run($0) != nil }
        Issue.record(
            "seed \(seed): \(failure)\nshrunk to \(shrunk.count) steps: \(shrunk)\nfails with: \(Self.run(shrunk) ?? "?")"
        )
    }
}
