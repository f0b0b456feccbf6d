import Foundation
import ModelStore

/// One step of a randomized differential run, applied the same way to the adapter's store and to the
/// suite's reference store. Values, predicates and sorts are indices into the value corpus, so a step
/// prints short and replays exactly.
enum RandomStep: Sendable, CustomStringConvertible {
    /// Inserts the specimen numbered `number` with the corpus values of `row`.
    case insert(number: Int, row: Int)
    /// Gives the `target`-th stored specimen (by code, modulo their count) the values of `row`.
    case update(target: Int, row: Int)
    /// Deletes the `target`-th stored specimen.
    case delete(target: Int)
    /// Puts the `target`-th specimen in folder `folder` (`nil` for none).
    case link(target: Int, folder: Int?)
    /// Sets the title of every specimen a corpus predicate selects, as one batch update.
    case batchUpdate(predicate: Int, title: Int)
    /// Deletes every specimen a corpus predicate selects, as one batch delete.
    case batchDelete(predicate: Int)
    /// Closes the adapter's store and opens it again (durable stores only).
    case reopen
    /// Fetches with a corpus predicate and a corpus sort, and counts, on both stores; with a window
    /// (offset `window % 3`, limit `window / 3`, none when 0) where the sort keeps every model.
    case query(predicate: Int, sort: Int, window: Int)

    var description: String {
        switch self {
        case .insert(let number, let row): "insert r\(number) with values of row \(row)"
        case .update(let target, let row): "update specimen #\(target) to the values of row \(row)"
        case .delete(let target): "delete specimen #\(target)"
        case .link(let target, let folder):
            "put specimen #\(target) in \(folder.map { "folder F\($0)" } ?? "no folder")"
        case .batchUpdate(let predicate, let title):
            "batch-update the title to text \(title) where \(RandomCorpus.predicates[predicate].name)"
        case .batchDelete(let predicate): "batch-delete where \(RandomCorpus.predicates[predicate].name)"
        case .reopen: "reopen the adapter's store"
        case .query(let predicate, let sort, let window):
            "fetch where \(RandomCorpus.predicates[predicate].name) sorted by \(RandomCorpus.sorts[sort].name), "
                + "window offset \(window % 3) limit \(window / 3 == 0 ? "none" : "\(window / 3)")"
        }
    }
}

/// The value corpus flattened for random runs: rows of values, predicates and sorts by index.
enum RandomCorpus {
    static let predicates: [(name: String, predicate: Predicate<Specimen>)] =
        ValueCorpus.families.flatMap { $0.predicates() } + [
            ("folder?.name == \"F1\"", #Predicate<Specimen> { $0.folder?.name == "F1" }),
            ("folder == nil", #Predicate<Specimen> { $0.folder == nil }),
        ]
    static let sorts: [(name: String, predicate: Predicate<Specimen>?, sortBy: [SortDescriptor<Specimen>])] =
        [("code", nil, [])] + ValueCorpus.families.flatMap { $0.sorts() }
    /// Families a row takes values from (the mebibyte of data is left to the `values` group).
    static let families = ValueCorpus.families

    /// Sets a specimen's attributes to the values of `row`: each family contributes the value at a
    /// position the row picks, so rows mix families' extremes.
    static func fill(_ specimen: Specimen, row: Int) {
        for (offset, family) in families.enumerated() {
            var index = (row &* (2 * offset + 3) &+ offset) % family.count
            if family.name == "data", ValueCorpus.payloads[index].count > 4096 { index = 0 }
            family.fill(specimen, index)
        }
    }
}

/// Drives the adapter's container and a reference container with the same steps, and compares them.
final class DifferentialRun {
    let env: CaseEnvironment
    let name: String
    private var adapter: ModelContainer?
    private let reference: ModelContainer
    private var adapterContext: ModelContext
    private let referenceContext: ModelContext

    /// Opens both stores (the adapter's in a store of its own, `name`) with three folders each.
    init(_ env: CaseEnvironment, name: String) throws {
        self.env = env
        self.name = name
        let adapter = try env.openContainer(name)
        self.adapter = adapter
        reference = try env.openReferenceContainer()
        adapterContext = ModelContext(adapter)
        referenceContext = ModelContext(reference)
        for context in [adapterContext, referenceContext] {
            for index in 0..<3 {
                let folder = Folder()
                folder.name = "F\(index)"
                context.insert(folder)
            }
            try context.save()
        }
    }

    /// Applies one step to both stores; throws a description of the first difference.
    func apply(_ step: RandomStep) throws {
        switch step {
        case .reopen:
            guard env.capabilities.contains(.durability) else { return }
            // The old container goes before the new one opens: some stores have a single writer.
            adapter = nil
            adapterContext = referenceContext
            let container = try env.openContainer(name)
            adapter = container
            adapterContext = ModelContext(container)
        case .query(let predicate, let sort, let window):
            try compare(predicate: predicate, sort: sort, window: window, after: step)
        default:
            let outcomes = [adapterContext, referenceContext].map { context -> String? in
                do {
                    try Self.apply(step, to: context)
                    return nil
                } catch {
                    return "\(error)"
                }
            }
            switch (outcomes[0], outcomes[1]) {
            case (let error?, nil): throw Difference("the adapter threw where the reference store did not: \(error)")
            case (nil, let error?): throw Difference("the reference store threw where the adapter did not: \(error)")
            default: break
            }
        }
        try compareEverything(after: step)
    }

    private static func apply(_ step: RandomStep, to context: ModelContext) throws {
        func specimens() throws -> [Specimen] {
            try context.fetch(FetchDescriptor<Specimen>(sortBy: [SortDescriptor(\.code, comparator: .lexical)]))
        }
        func target(_ index: Int) throws -> Specimen? {
            let all = try specimens()
            return all.isEmpty ? nil : all[index % all.count]
        }
        switch step {
        case .insert(let number, let row):
            let specimen = Specimen()
            specimen.code = "r\(number)"
            specimen.series = "r"
            specimen.serial = number
            RandomCorpus.fill(specimen, row: row)
            context.insert(specimen)
            try context.save()
        case .update(let index, let row):
            guard let specimen = try target(index) else { return }
            RandomCorpus.fill(specimen, row: row)
            try context.save()
        case .delete(let index):
            guard let specimen = try target(index) else { return }
            context.delete(specimen)
            try context.save()
        case .link(let index, let folder):
            guard let specimen = try target(index) else { return }
            let folders = try context.fetch(FetchDescriptor<Folder>())
            specimen.folder = folder.flatMap { number in folders.first { $0.name == "F\(number)" } }
            try context.save()
        case .batchUpdate(let predicate, let title):
            try context.update(
                Specimen.self, where: RandomCorpus.predicates[predicate].predicate,
                set: [.set(\.title, to: ValueCorpus.texts[title % ValueCorpus.texts.count])])
        case .batchDelete(let predicate):
            try context.delete(model: Specimen.self, where: RandomCorpus.predicates[predicate].predicate)
        case .reopen, .query: break
        }
    }

    /// The same models, in the same order, and the same count, for one predicate and sort.
    private func compare(predicate: Int, sort: Int, window: Int, after step: RandomStep) throws {
        let filter = RandomCorpus.predicates[predicate].predicate
        let order = RandomCorpus.sorts[sort]
        // The sort's own predicate keeps out what Swift does not order (NaN); the code ends ties.
        let sortBy = order.sortBy + [SortDescriptor(\Specimen.code, comparator: .lexical)]
        func answer(_ context: ModelContext) -> String {
            do {
                var descriptor = FetchDescriptor<Specimen>(predicate: filter, sortBy: [])
                let selected = Set(try context.fetch(descriptor).map(\.code))
                descriptor = FetchDescriptor<Specimen>(predicate: order.predicate, sortBy: sortBy)
                let ordered = try context.fetch(descriptor).map(\.code).filter { selected.contains($0) }
                let count = try context.fetchCount(FetchDescriptor<Specimen>(predicate: filter))
                var answer = "\(ordered) (count \(count))"
                if order.predicate == nil {
                    // A window of the predicate's sorted result, and its identifiers, which must be the
                    // fetched models' own, in the same order.
                    var windowed = FetchDescriptor<Specimen>(predicate: filter, sortBy: sortBy)
                    windowed.fetchOffset = window % 3
                    windowed.fetchLimit = window / 3 == 0 ? nil : window / 3
                    let models = try context.fetch(windowed)
                    let identifiers = try context.fetchIdentifiers(windowed)
                    let windowCount = try context.fetchCount(windowed)
                    answer += " window \(models.map(\.code)) (count \(windowCount))"
                    if identifiers != models.map(\.persistentModelID) { answer += " identifiers disagree with fetch" }
                }
                return answer
            } catch {
                return "error: \(error)"
            }
        }
        let found = answer(adapterContext)
        let expected = answer(referenceContext)
        guard found == expected else {
            throw Difference("the adapter answered \(found), the reference store \(expected)")
        }
    }

    /// Every specimen's values and folder, by code, read in fresh contexts of both stores.
    private func compareEverything(after step: RandomStep) throws {
        func state(_ container: ModelContainer) throws -> [String] {
            try ModelContext(container).fetch(FetchDescriptor<Specimen>()).map { specimen in
                var parts = [specimen.code, specimen.folder?.name ?? "-"]
                for family in ValueCorpus.families {
                    parts.append(ValueCases.describe(specimen, Self.attributesByFamily[family.name] ?? []))
                }
                return parts.joined(separator: " | ")
            }
            .sorted()
        }
        let adapter = try env.require(self.adapter, "the adapter's container is gone")
        let found = try state(adapter)
        let expected = try state(reference)
        guard found == expected else {
            let first = zip(found, expected).first { $0 != $1 }
            throw Difference(
                "the stores hold different models (\(found.count) in the adapter, \(expected.count) in the reference); "
                    + "first difference: adapter \(first?.0 ?? found.last ?? "none"), reference "
                    + "\(first?.1 ?? expected.last ?? "none")")
        }
    }

    /// The attributes each family of the corpus sets, by family name.
    static let attributesByFamily: [String: [String]] = [
        "integers": [
            "count", "large", "quadWord", "unsigned", "tiny", "small", "medium", "byte", "word", "doubleWord",
        ],
        "floatingPoint": ["weight", "ratio"], "decimals": ["price"], "strings": ["title"],
        "dates": ["createdAt", "reviewedAt"], "data": ["payload"], "optionals": ["nickname", "rank", "grade"],
        "composites": [
            "isActive", "token", "homepage", "kind", "tags", "measurements", "labelsByNumber", "origin",
        ],
    ]
}

/// What differed between the adapter and the reference store after a step.
struct Difference: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
