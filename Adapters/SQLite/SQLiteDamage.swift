import Foundation
import ModelStore

/// Damage in an SQLite store's files: a row whose values do not match the checksum stored with them,
/// a write-ahead log damaged before committed transactions, or an emptied file. The file was changed
/// from outside (a flipped bit, a bad sector, a tool writing into it).
///
/// The ``DataStoreError/corrupted`` error an open or a read throws carries it as its
/// `underlyingError`, so a caller can find the damage. It names the file and the table and row (or
/// the byte offset in a write-ahead log), never a row's values.
public struct SQLiteDamage: Error, Sendable, Hashable, CustomStringConvertible {
    /// The database file.
    public let file: String
    /// The table, as the store names it: an entity's name, `Entity.relationship` for a to-many
    /// relationship's join table, or `modelstore_meta`; `nil` for damage outside the tables.
    public let table: String?
    /// The row: the model's key in an entity table, the owner's key in a join table; `nil` in
    /// `modelstore_meta`.
    public let row: Int64?
    /// The related model's position in a join table; `nil` elsewhere.
    public let position: Int64?
    /// The key of a `modelstore_meta` row; `nil` elsewhere.
    public let key: String?
    /// The byte offset of the damage in the file, where known (in a write-ahead log).
    public let offset: Int?

    /// Damage at a row of a table, or at an offset of a file.
    public init(
        file: String, table: String? = nil, row: Int64? = nil, position: Int64? = nil, key: String? = nil,
        offset: Int? = nil
    ) {
        self.file = file
        self.table = table.map { $0.hasPrefix("\"") ? String($0.dropFirst().dropLast()) : $0 }
        self.row = row
        self.position = position
        self.key = key
        self.offset = offset
    }

    /// Where the damage is, in words: `row 12 of 'Book' in '/path/store.sqlite'`.
    public var description: String {
        guard let table else {
            return "the file '\(file)' is damaged" + (offset.map { " at byte \($0)" } ?? "")
        }
        let place =
            if let key { "the row '\(key)'" } else if let position, let row {
                "the related model at position \(position) of row \(row)"
            } else if let row { "row \(row)" } else { "a row" }
        return "\(place) of '\(table)' in the SQLite store '\(file)' does not match its checksum"
    }

    /// The error a read throws for it.
    func error(entityName: String?) -> DataStoreError {
        DataStoreError(
            .corrupted, "\(description): the file was damaged",
            remedy: "Restore the file from a backup; 'modelstore verify' lists every damaged row",
            entityName: entityName, underlyingError: self)
    }
}
