import Foundation
import ModelStore
import ModelStoreTooling

/// An entity and how many models of it a store holds (the core's `StoreEntityCount`).
typealias EntityCount = StoreEntityCount

/// A damaged place in a store, as `verify` reports it (the core's `StoreProblem`).
typealias Problem = StoreProblem

extension EntityCount {
    /// The entities of a schema with their counts in an open store, in schema order.
    static func all(in store: OpenedStore, progress: ProgressBar) throws -> [EntityCount] {
        progress.phase("counting", total: store.schema.entities.count)
        return try store.schema.entities.map { entity in
            defer { progress.advance() }
            return EntityCount(name: entity.name, modelCount: try store.count(of: entity.name))
        }
    }

    /// The lines of a count table, with a total; an estimate reads `about N (estimated)`.
    static func lines(_ entities: [EntityCount]) -> [String] {
        let total = entities.reduce(0) { $0 + $1.modelCount }
        let estimated = entities.contains(where: \.isEstimate)
        let rows =
            entities.map { [$0.name, $0.isEstimate ? "about \($0.modelCount) (estimated)" : String($0.modelCount)] }
            + [["total", estimated ? "about \(total)" : String(total)]]
        return ReportFormat.table(rows)
    }
}
