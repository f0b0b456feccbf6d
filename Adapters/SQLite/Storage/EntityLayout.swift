import Foundation
import ModelStore

/// The SQL shape of one entity: its table, its columns in property order, its join tables, and
/// the statements that read and write a row.
///
/// - Table `"Entity"`: `"_pk" INTEGER PRIMARY KEY`, then one column per attribute and per to-one
///   relationship (the related model's key), named as the properties are.
/// - Table `"Entity.relationship"` per to-many relationship: `owner`, `position`, `target`, so the
///   order of the related models round-trips.
/// - Unique index `"Entity.unique.N"` per uniqueness constraint, index `"Entity.index.N"` per
///   declared index, and an index on `target` of each join table and on each to-one column.
final class EntityLayout: Sendable {
    struct Column: Sendable {
        /// The property's slot in snapshots.
        let slot: Int
        /// The property name.
        let name: String
        /// How attributes are kept; `nil` for a to-one relationship (an `INTEGER` key).
        let kind: ColumnKind?
        /// Whether the attribute is optional.
        let isOptional: Bool
        /// The related entity, for a to-one relationship.
        let destination: String?
        /// Whether the attribute is `.externalStorage`: its large values live in files
        /// (``ExternalValueFolder``), so SQL never compares the column.
        var isExternal = false
    }

    struct JoinTable: Sendable {
        let slot: Int
        let name: String
        let table: String
        let destination: String
    }

    let entity: Schema.Entity
    /// The quoted table name.
    let table: String
    let columns: [Column]
    let joinTables: [JoinTable]
    let columnsBySlot: [Int: Column]
    /// The `.externalStorage` columns, whose large values are files.
    let externalColumns: [Column]

    /// `"_pk", "a", "b", …`: the columns a row is written with.
    let columnList: String
    /// `"_pk", "a", "b", …, "_crc"`: the columns a row is read with, its checksum last
    /// (``RowChecksum``).
    let selectList: String
    /// `t0."_pk", t0."a", …, t0."_crc"`: the select list qualified by ``SQLiteQueryPlan/alias``.
    let aliasedSelectList: String
    /// The index of the checksum in ``selectList``: the columns before it are the ones it covers.
    let checksumIndex: Int32
    /// `INSERT` of one row with every column (``columnList``).
    let insertSQL: CachedSQL
    /// `SELECT` of one row's ``selectList`` by its key.
    let selectByKeySQL: CachedSQL
    /// Each attribute's default value by slot (`.null` for relationships): what a row read with
    /// fewer attributes holds in the others.
    let defaultValues: [StoreValue]
    /// Whether a stored row can be compared with a snapshot's values column by column, bit for bit,
    /// without reading it into a snapshot (``RowReader/holds(_:layout:exactly:)``): the entity has
    /// no relationships and no external values, and every column is of a kind compared that way.
    let comparesRowsInPlace: Bool

    static let primaryKey = "\"_pk\""

    /// The slots of the entity's properties with these names (names it lacks are left out).
    func slots(of names: [String]) -> Set<Int> {
        Set(names.compactMap { entity.slot(of: $0) })
    }

    init(_ entity: Schema.Entity) {
        self.entity = entity
        table = quote(entity.name)
        var columns: [Column] = []
        var joins: [JoinTable] = []
        for property in entity.properties {
            switch property {
            case .attribute(let attribute):
                columns.append(
                    Column(
                        slot: attribute.slot, name: attribute.name, kind: ColumnKind(attribute.valueType),
                        isOptional: attribute.isOptional, destination: nil,
                        isExternal: attribute.options.contains(.externalStorage)
                            && ColumnKind(attribute.valueType) == .data))
            case .relationship(let relationship) where relationship.isToOne:
                columns.append(
                    Column(
                        slot: relationship.slot, name: relationship.name, kind: nil, isOptional: true,
                        destination: relationship.destination))
            case .relationship(let relationship):
                joins.append(
                    JoinTable(
                        slot: relationship.slot, name: relationship.name,
                        table: quote(entity.name + "." + relationship.name), destination: relationship.destination))
            }
        }
        self.columns = columns
        defaultValues = entity.properties.map { property in
            if case .attribute(let attribute) = property { return attribute.defaultValue }
            return .null
        }
        joinTables = joins
        columnsBySlot = Dictionary(uniqueKeysWithValues: columns.map { ($0.slot, $0) })
        externalColumns = columns.filter(\.isExternal)
        let names = columns.map { quote($0.name) }
        columnList = ([Self.primaryKey] + names).joined(separator: ", ")
        selectList = ([Self.primaryKey] + names + [RowChecksum.column]).joined(separator: ", ")
        aliasedSelectList = ([Self.primaryKey] + names + [RowChecksum.column]).map { "\(SQLiteQueryPlan.alias).\($0)" }
            .joined(separator: ", ")
        checksumIndex = Int32(names.count + 1)
        insertSQL = CachedSQL(
            "INSERT INTO \(table) (\(columnList)) VALUES ("
                + Array(repeating: "?", count: names.count + 1).joined(separator: ", ") + ")")
        selectByKeySQL = CachedSQL("SELECT \(selectList) FROM \(table) WHERE \(Self.primaryKey) = ?")
        comparesRowsInPlace =
            joins.isEmpty && externalColumns.isEmpty
            && columns.allSatisfy { column in
                switch column.kind {
                case .bool, .int, .uint64, .double, .string, .date, .uuid: true
                case .decimal, .data, .url, .encoded, nil: false
                }
            }
    }

    /// The column of a property, if it is an attribute or a to-one relationship.
    func column(named name: String) -> Column? {
        guard let slot = entity.slot(of: name) else { return nil }
        return columnsBySlot[slot]
    }

    /// The statements that create the entity's table under `table` (with its indexes, if asked)
    /// and its join tables.
    func creationSQL(table: String, indexes: Bool = true) -> [String] {
        var sql: [String] = []
        let definitions =
            [Self.primaryKey + " INTEGER PRIMARY KEY"]
            + columns.map { column in
                let type = column.kind?.declaration ?? "INTEGER"
                return type.isEmpty ? quote(column.name) : quote(column.name) + " " + type
            }
            + [RowChecksum.definition(over: [Self.primaryKey] + columns.map { quote($0.name) })]
        sql.append("CREATE TABLE \(table) (" + definitions.joined(separator: ", ") + ")")
        guard indexes else { return sql }
        sql += indexSQL
        for join in joinTables { sql += joinTableSQL(join) }
        return sql
    }

    /// The columns of a join table a row is written with; its checksum covers them.
    static let joinColumns = "owner, position, target"

    /// The statements that create a join table and its index.
    func joinTableSQL(_ join: JoinTable) -> [String] {
        [
            "CREATE TABLE \(join.table) (owner INTEGER NOT NULL, position INTEGER NOT NULL, "
                + "target INTEGER NOT NULL, \(RowChecksum.definition(over: ["owner", "position", "target"])), "
                + "PRIMARY KEY (owner, position)) WITHOUT ROWID",
            "CREATE INDEX \(quote(entity.name + "." + join.name + ".target")) ON \(join.table) (target)",
        ]
    }

    /// The statements that create the entity table's indexes.
    var indexSQL: [String] {
        var sql: [String] = []
        for (number, names) in entity.uniquenessConstraints.enumerated() {
            sql.append(
                "CREATE UNIQUE INDEX \(quote("\(entity.name).unique.\(number)")) ON \(table) ("
                    + names.map(quote).joined(separator: ", ") + ")")
        }
        for (number, names) in entity.indices.enumerated() where !isServedByAnotherIndex(names) {
            sql.append(
                "CREATE INDEX \(quote("\(entity.name).index.\(number)")) ON \(table) ("
                    + names.map(quote).joined(separator: ", ") + ")")
        }
        for column in columns where column.kind == nil {
            sql.append("CREATE INDEX \(quote("\(entity.name).\(column.name).key")) ON \(table) (\(quote(column.name)))")
        }
        return sql
    }

    /// Whether a declared index on these properties would be a second copy of an index the table has
    /// anyway, written on every save for nothing: the index of a to-one column (``indexSQL`` gives each
    /// its own), or a unique index on the same properties in the same order (a unique index serves
    /// every look-up an index does). Such an index is not created, and its number stays unused.
    func isServedByAnotherIndex(_ names: [String]) -> Bool {
        if names.count == 1, let column = column(named: names[0]), column.kind == nil { return true }
        return entity.uniquenessConstraints.contains(names)
    }

    /// The statements that drop the entity's tables (their indexes go with them).
    var dropSQL: [String] {
        ["DROP TABLE IF EXISTS \(table)"] + joinTables.map { "DROP TABLE IF EXISTS \($0.table)" }
    }

    /// The property names of a unique index, from the columns SQLite names in a constraint error
    /// (`UNIQUE constraint failed: Entity.a, Entity.b`).
    func constraint(inMessage message: String) -> [String]? {
        entity.uniquenessConstraints.first { names in
            names.allSatisfy { message.contains("\(entity.name).\($0)") }
                && message.components(separatedBy: ",").count == names.count
        }
    }
}

/// An SQL identifier in double quotes, with quotes inside doubled.
func quote(_ name: String) -> String {
    // Property names almost never hold a quote: skip Foundation's replacement (slow per call) then.
    guard name.utf8.contains(UInt8(ascii: "\"")) else { return "\"" + name + "\"" }
    return "\"" + name.replacingOccurrences(of: "\"", with: "\"\"") + "\""
}

extension EntityLayout {
    /// The key of a schema's layouts among its derived values.
    private enum LayoutsOfSchema {}

    /// The layout of each of the schema's entities, by entity name: built once per schema instance
    /// and kept with it, so stores opened again with the same (immutable) schema share them.
    static func layouts(of schema: Schema) -> [String: EntityLayout] {
        schema.derived(by: LayoutsOfSchema.self) {
            Dictionary(uniqueKeysWithValues: schema.entities.map { ($0.name, EntityLayout($0)) })
        }
    }
}
