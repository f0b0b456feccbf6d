import Foundation
import ModelStore

extension SnapshotTable {
    /// Read access to one entity's rows as the table stores them, for a writer that encodes every
    /// row (a whole-file format): typed arrays for the columns that have them, so a writer reads a
    /// string or a number in place instead of through a `StoreValue` per value.
    ///
    /// Rows are numbered from 0 to ``rowCount``; some are deleted (``isLive(_:)``). A typed column's
    /// array holds a placeholder at rows that hold `nil` (``isNull(_:at:)``) or are deleted.
    public struct StoredColumns {
        fileprivate let table: EntityTable

        /// How many rows are stored, deleted ones included: row numbers run below it.
        public var rowCount: Int { table.rowCount }

        /// Whether a row holds a model (rows of deleted models stay until the table compacts).
        public func isLive(_ row: Int) -> Bool { table.isLive(row) }

        /// The identifier of a row's model.
        public func identifier(at row: Int) -> PersistentIdentifier { table.ids[row] }

        /// The primary key of a row's identifier, without building the identifier.
        public func primaryKey(at row: Int) -> PrimaryKey { table.ids.primaryKey(at: row) }

        /// The value of a property (by slot) of a row, as it was stored.
        public func value(_ slot: Int, at row: Int) -> StoreValue { table.columns[slot].value(at: row) }

        /// Whether a property (by slot) of a row holds `nil`.
        public func isNull(_ slot: Int, at row: Int) -> Bool { table.columns[slot].isNull(at: row) }

        /// Whether any row of a property (by slot) might hold `nil`; when `false`, no row does.
        public func mayHoldNull(_ slot: Int) -> Bool {
            let column = table.columns[slot]
            return column.kind == .values || column.hasNulls
        }

        /// A property's values by row, when the column holds every value as an `StoreValue.int(_:)`.
        public func integers(_ slot: Int) -> [Int64]? {
            let column = table.columns[slot]
            return column.kind == .int ? column.ints : nil
        }

        /// A property's values by row, when the column holds every value as a `StoreValue.double(_:)`.
        public func doubles(_ slot: Int) -> [Double]? {
            let column = table.columns[slot]
            return column.kind == .double ? column.doubles : nil
        }

        /// A property's values by row as seconds since the reference date, when the column holds every
        /// value as a `StoreValue.date(_:)`.
        public func dates(_ slot: Int) -> [Double]? {
            let column = table.columns[slot]
            return column.kind == .date ? column.doubles : nil
        }

        /// A property's values by row, when the column holds every value as a `StoreValue.string(_:)`.
        public func strings(_ slot: Int) -> [String]? {
            let column = table.columns[slot]
            return column.kind == .string ? column.strings : nil
        }

        /// A property's values by row, when the column holds every value as a `StoreValue.bool(_:)`.
        public func booleans(_ slot: Int) -> [Bool]? {
            let column = table.columns[slot]
            return column.kind == .bool ? column.bools : nil
        }
    }

    /// The stored columns of an entity, or `nil` if the schema has no such entity.
    public func storedColumns(of entityName: String) -> StoredColumns? {
        tables[entityName].map(StoredColumns.init(table:))
    }
}
