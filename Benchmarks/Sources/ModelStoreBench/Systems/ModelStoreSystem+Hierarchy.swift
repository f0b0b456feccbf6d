import Foundation
import ModelStore

/// The class-hierarchy workloads: a fetch of a hierarchy's root class against a fetch of the same
/// rows in one flat entity, each repetition in a fresh context.
extension ModelStoreSystem {
    /// A fetch of every `Fetched` model from a store filled, untimed, with one model per row made by
    /// `model` and saved once; checked against the totals of the rows whose class `include` passes.
    private func fetchEvery<Fetched: PersistentModel, Stored: PersistentModel>(
        _ fetched: Fetched.Type, _ workload: Workload, _ data: Dataset, _ directory: URL,
        types: [any PersistentModel.Type], model: (UserRow, Int) -> Stored, path: String,
        include: (Hierarchy.Kind) -> Bool = { _ in true }, totals: @escaping ([Fetched]) -> Hierarchy.Totals
    ) throws -> Trial {
        let expected = Hierarchy.expected(data, include: include)
        let container = try ModelContainer(
            for: Schema(types), configurations: [configuration(directory.appendingPathComponent("store"))])
        let filling = ModelContext(container)
        for (index, row) in data.rows.enumerated() { filling.insert(model(row, index)) }
        try filling.save()
        var context: ModelContext?
        return Trial(
            path: path + ", fresh context", prepare: { _ in context = ModelContext(container) },
            run: { _ in try context!.fetch(FetchDescriptor<Fetched>()) },
            check: { models, repetition in
                try Hierarchy.check(totals(models), expected: expected, repetition: repetition, workload)
            })
    }

    func hierarchyBase(_ data: Dataset, _ directory: URL) throws -> Trial {
        try fetchEvery(
            Account.self, .hierarchyBase, data, directory, types: Hierarchy.types, model: Hierarchy.model,
            path: "context.fetch(FetchDescriptor<Account>()) of every model of 4 classes", totals: Hierarchy.totals)
    }

    func hierarchyFlat(_ data: Dataset, _ directory: URL) throws -> Trial {
        try fetchEvery(
            FlatAccount.self, .hierarchyFlat, data, directory, types: [FlatAccount.self], model: Hierarchy.flatModel,
            path: "context.fetch(FetchDescriptor<FlatAccount>()) of every model", totals: Hierarchy.totals)
    }

    func hierarchySubclass(_ data: Dataset, _ directory: URL) throws -> Trial {
        try fetchEvery(
            Customer.self, .hierarchySubclass, data, directory, types: Hierarchy.types, model: Hierarchy.model,
            path: "context.fetch(FetchDescriptor<Customer>()), a leaf class of a quarter of the rows",
            include: { $0 == .customer }, totals: { Hierarchy.totals($0) })
    }
}
