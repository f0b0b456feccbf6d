import BenchHarness
import Foundation
import ModelStore
import ModelStoreInMemory

/// The system behind each name of ``Catalog``.
enum Registry {
    /// The system with this name (a `-batch` name is its base ModelStore system inserting through the batch API).
    static func system(named name: String) -> (any BenchSystem)? {
        let batch = name.hasSuffix(Catalog.batchInsertSuffix)
        let base = batch ? String(name.dropLast(Catalog.batchInsertSuffix.count)) : name
        switch base {
        case "inmemory":
            return ModelStoreSystem(configuration: { _ in .inMemory() }, isDurable: false, batchInsert: batch)
        case "jsonfile", "appendlog", "appendlog-none":
            return PendingSystem(reason: "the adapter has not landed on main yet")
        case "grdb-memory" where !batch: return GRDBSystem(kind: .memory)
        case "grdb-file" where !batch: return GRDBSystem(kind: .file)
        case "grdb-file-sync" where !batch: return GRDBSystem(kind: .fileSynced)
        case "foundation-json" where !batch: return FoundationJSONSystem()
        case "foundation-predicate" where !batch: return FoundationPredicateSystem()
        case "array-baseline" where !batch: return ArrayBaselineSystem()
        default: return nil
        }
    }
}

/// A system that cannot be measured in this build, with the reason.
struct PendingSystem: BenchSystem {
    let reason: String
    func notApplicable(_ workload: Workload) -> String? { reason }
}
