import Foundation
import ModelStore

extension SQLiteStore {
    /// Exactly when the condition translates into SQL that SQLite evaluates as Swift would (see the
    /// translator's rules: regular expressions, decimals, optional doubles, unsigned ordering, mixed
    /// kinds and encoded values do not), else not at all: the context then evaluates it, and the
    /// store receives only what runs in SQL. The answer is kept per condition shape.
    public func pushDown(_ filter: StoreFilter, entityName: String) -> StorePushDown {
        guard let layout = layouts[entityName] else { return .unsupported }
        return database.withLock { connection in
            connection.queries.pushDown(filter, entityName: entityName) {
                var translator = FilterTranslator(layouts: layouts, storeIdentifier: identifier)
                let sql = translator.translate(filter, layout: layout, alias: SQLiteQueryPlan.alias)
                return sql == nil ? .unsupported : .exact
            }
        }
    }

    /// Whether `ORDER BY` gives `SortDescriptor`'s order for every key: not for unsigned 64-bit
    /// integers, decimals, data, encoded values, optional doubles, or strings under a comparison
    /// other than `binary`. The context sorts the snapshots otherwise.
    public func sortsExactly(by keys: [StoreSortKey], entityName: String) -> Bool {
        guard let layout = layouts[entityName] else { return false }
        return keys.allSatisfy { SQLiteQueryPlan.exactSortColumn($0, layout: layout) != nil }
    }
}
