import Foundation
import ModelStore

/// The SQL shape of one entity in the store's namespace.
///
/// - Table `"ns"."Entity"`: `_pk bigint PRIMARY KEY`, `_version bigint` (raised by every write,
///   for optimistic concurrency), then one column per attribute and per to-one relationship (the
///   related model's key, a foreign key to its table), named as the properties are.
/// - Table `"ns"."Entity.relationship"` per to-many relationship: `owner`, `position`, `target`,
///   both keys foreign keys that cascade, so the order of the related models round-trips.
/// - A unique index per uniqueness constraint and an index per declared index (but one of a to-one
///   relationship alone, which its column's index serves), text columns keyed by their NFC form (see
///   ``indexSQL``); an index on each to-one column and join-table target.
struct TableLayout: Sendable {
    struct Column: Sendable {
        let slot: Int
        let name: String
        /// How an attribute is kept; `nil` for a to-one relationship (a `bigint` key).
        let type: ColumnType?
        let destination: String?
        var quoted: String { quote(name) }
    }

    struct JoinTable: Sendable {
        let slot: Int
        let name: String
        let table: String
        let destination: String
    }

    let entity: Schema.Entity
    let namespace: String
    /// The `fillfactor` the entity's table is created with (see
    /// ``PostgreSQLStoreConfiguration/fillFactor``); 100 leaves it at PostgreSQL's default.
    let fillFactor: Int
    let table: String
    let columns: [Column]
    let joinTables: [JoinTable]
    let columnsBySlot: [Int: Column]
    /// `t."_pk", t."_version", t."a", …` for a table aliased `t`.
    let selectList: String
    /// Each attribute's default value by slot (`.null` for relationships): what a row read with
    /// fewer attributes holds in the others.
    let defaultValues: [StoreValue]

    static let key = "\"_pk\""
    static let version = "\"_version\""

    init(_ entity: Schema.Entity, namespace: String, fillFactor: Int = 100) {
        self.entity = entity
        self.namespace = namespace
        self.fillFactor = fillFactor
        table = quote(namespace) + "." + quote(entity.name)
        var columns: [Column] = []
        var joins: [JoinTable] = []
        for property in entity.properties {
            switch property {
            case .attribute(let attribute):
                columns.append(
                    Column(
                        slot: attribute.slot, name: attribute.name, type: ColumnType(attribute.valueType),
                        destination: nil))
            case .relationship(let relationship) where relationship.isToOne:
                columns.append(
                    Column(
                        slot: relationship.slot, name: relationship.name, type: nil,
                        destination: relationship.destination))
            case .relationship(let relationship):
                joins.append(
                    JoinTable(
                        slot: relationship.slot, name: relationship.name,
                        table: quote(namespace) + "." + quote(entity.name + "." + relationship.name),
                        destination: relationship.destination))
            }
        }
        self.columns = columns
        joinTables = joins
        columnsBySlot = Dictionary(uniqueKeysWithValues: columns.map { ($0.slot, $0) })
        selectList = Self.selectList(of: columns, alias: "t")
        defaultValues = entity.properties.map { property in
            if case .attribute(let attribute) = property { return attribute.defaultValue }
            return .null
        }
    }

    /// `a."_pk", a."_version", a."x", …` for the table aliased `alias`: what ``RowReader`` reads.
    func selectList(alias: String) -> String { Self.selectList(of: columns, alias: alias) }

    /// The columns a read selects: all of them, or with `attributes` (slots), those attributes and
    /// every to-one relationship (see ``StoreQuery/propertiesToFetch``).
    func columns(reading attributes: Set<Int>?) -> [Column] {
        guard let attributes else { return columns }
        return columns.filter { $0.type == nil || attributes.contains($0.slot) }
    }

    /// The select list of `columns` (in order, after the key and the version) for the table aliased `alias`.
    static func selectList(of columns: [Column], alias: String) -> String {
        ([alias + "." + key, alias + "." + version]
            + columns.map { column in column.type?.selected(alias + "." + column.quoted) ?? alias + "." + column.quoted
            })
            .joined(separator: ", ")
    }

    /// Whether the table has no to-one column and no join table: no foreign key reaches its rows.
    var hasNoRelationships: Bool { joinTables.isEmpty && !columns.contains { $0.type == nil } }

    /// The layouts of a schema's entities in a namespace, by entity name.
    static func layouts(of schema: Schema, namespace: String, fillFactor: Int = 100) -> [String: TableLayout] {
        Dictionary(
            uniqueKeysWithValues: schema.entities.map {
                ($0.name, TableLayout($0, namespace: namespace, fillFactor: fillFactor))
            })
    }

    /// The column of a property, if it is an attribute or a to-one relationship.
    func column(named name: String) -> Column? {
        entity.slot(of: name).flatMap { columnsBySlot[$0] }
    }

    /// `INSERT INTO … (key, version, columns in order)`, to be followed by `VALUES`.
    var insertPrefix: String {
        "INSERT INTO \(table) (" + ([Self.key, Self.version] + columns.map(\.quoted)).joined(separator: ", ") + ")"
    }

    /// `INSERT` of many rows from one array per column: the keys (`$1`), then each column's values
    /// in order, unnested together (version 1). The same text for every batch of the table, so it
    /// is kept prepared (every parameter typed by its cast).
    var arrayInsertSQL: String {
        var arrays = ["$1::bigint[]"]
        var names = ["k"]
        var selected = "v.k, 1"
        for (index, column) in columns.enumerated() {
            let type: String = column.type?.arrayDeclaration ?? "bigint[]"
            arrays.append("$\(index + 2)::\(type)")
            names.append("c\(index)")
            selected += ", v.c\(index)"
        }
        let list: String = arrays.joined(separator: ", ")
        return "\(insertPrefix) SELECT \(selected) FROM unnest(\(list)) AS v(\(names.joined(separator: ", ")))"
    }

    /// `INSERT` of one row: key, version, then the columns in order.
    var insertSQL: String {
        var placeholders = ["$1", "$2"]
        for (index, column) in columns.enumerated() {
            placeholders.append(column.type?.placeholder(index + 3) ?? "$\(index + 3)")
        }
        return insertPrefix + " VALUES (" + placeholders.joined(separator: ", ") + ")"
    }

    /// The statements that create the table, its join tables and indexes (foreign keys come
    /// later, in ``foreignKeySQL``, once every table exists).
    var creationSQL: [String] {
        let definitions =
            ["\(Self.key) bigint PRIMARY KEY", "\(Self.version) bigint NOT NULL DEFAULT 1"]
            + columns.map { "\($0.quoted) \($0.type?.declaration ?? "bigint")" }
        // Room left on each page lets an update write the row's new version beside the old one (a
        // HOT update), which adds no index entries; join tables' rows are only inserted and deleted.
        let storage = fillFactor < 100 ? " WITH (fillfactor = \(fillFactor))" : ""
        var sql = ["CREATE TABLE \(table) (" + definitions.joined(separator: ", ") + ")" + storage]
        sql += indexSQL
        for join in joinTables { sql += joinTableSQL(join) }
        return sql
    }

    /// The statements that create a join table and its index.
    func joinTableSQL(_ join: JoinTable) -> [String] {
        [
            "CREATE TABLE \(join.table) (owner bigint NOT NULL, position integer NOT NULL, "
                + "target bigint NOT NULL, PRIMARY KEY (owner, position))",
            "CREATE INDEX \(quote(indexName(join.name + ".target"))) ON \(join.table) (target)",
        ]
    }

    /// The statements that create the table's indexes.
    ///
    /// Filters and sorts compare text by its NFC form under `COLLATE "C"` (Swift's equality and
    /// order, see ``textKey(_:)``), which an index on the plain column cannot serve; so every index
    /// keys its text columns by that expression. For a unique index this is also the constraint Swift's `==` asks for: two
    /// canonically equivalent spellings (`"é"` and `"e\u{301}"`) are one value, refused as a
    /// duplicate, as the context's upsert matches them (format 4; before it, the unique index
    /// compared the stored bytes and a second index served lookups).
    var indexSQL: [String] {
        var sql: [String] = []
        for (number, names) in entity.uniquenessConstraints.enumerated() {
            sql.append(
                "CREATE UNIQUE INDEX \(quote(uniqueIndexName(number))) ON \(table) (\(indexKeys(names)))")
        }
        for (number, names) in createdIndices {
            sql.append("CREATE INDEX \(quote(indexName("index.\(number)"))) ON \(table) (\(indexKeys(names)))")
        }
        for column in columns where column.type == nil {
            sql.append("CREATE INDEX \(quote(indexName(column.name + ".key"))) ON \(table) (\(column.quoted))")
        }
        return sql
    }

    /// The entity's declared indexes that ``indexSQL`` creates, with their numbers. Left out is one that
    /// would be a second copy of an index the table has anyway, written on every save for nothing: one
    /// of a to-one relationship alone, which the column's own index (`Entity.relationship.key`) already
    /// is, and one on the same properties, in the same order, as a uniqueness constraint, whose unique
    /// index has the same keys. Its number stays unused.
    private var createdIndices: [(number: Int, names: [String])] {
        entity.indices.enumerated().compactMap { number, names in
            if names.count == 1, let column = column(named: names[0]), column.type == nil { return nil }
            if entity.uniquenessConstraints.contains(names) { return nil }
            return (number, names)
        }
    }

    /// The key list of an index on these properties: text columns as the expression filters and
    /// sorts compare (their NFC form under `COLLATE "C"`, see ``textKey(_:)``), others as they are.
    private func indexKeys(_ names: [String]) -> String {
        names.map { name in
            column(named: name)?.type == .string ? "(" + Self.textKey(quote(name)) + ")" : quote(name)
        }.joined(separator: ", ")
    }

    /// The form in which filters, sorts and indexes compare a text column or parameter: its NFC form
    /// in byte order, which is Swift's `==` and `<` on strings.
    ///
    /// An ASCII string is its own NFC form, and one whose length in bytes is its length in
    /// characters is ASCII, so only the others go through `normalize`: that costs about 3 µs a
    /// UUID-sized value on the server, paid on every insert or update into an index keyed this way,
    /// where the lengths cost a tenth of it (format 5; formats 3 and 4 normalized every value).
    static func textKey(_ expression: String) -> String {
        "(CASE WHEN octet_length(\(expression)) = length(\(expression)) THEN \(expression) "
            + "ELSE normalize(\(expression), NFC) END) COLLATE \"C\""
    }

    /// Foreign keys of the to-one columns and join tables, deferred to the commit so a save may
    /// write rows in any order; the store clears references to missing rows before it commits.
    func foreignKeySQL(layouts: [String: TableLayout]) -> [String] {
        var sql: [String] = []
        for column in columns where column.type == nil {
            guard let target = column.destination.flatMap({ layouts[$0] }) else { continue }
            sql.append(
                "ALTER TABLE \(table) ADD FOREIGN KEY (\(column.quoted)) REFERENCES \(target.table) (\(Self.key)) "
                    + "ON DELETE SET NULL DEFERRABLE INITIALLY DEFERRED")
        }
        for join in joinTables {
            guard let target = layouts[join.destination] else { continue }
            sql.append(
                "ALTER TABLE \(join.table) ADD FOREIGN KEY (owner) REFERENCES \(table) (\(Self.key)) "
                    + "ON DELETE CASCADE DEFERRABLE INITIALLY DEFERRED")
            sql.append(
                "ALTER TABLE \(join.table) ADD FOREIGN KEY (target) REFERENCES \(target.table) (\(Self.key)) "
                    + "ON DELETE CASCADE DEFERRABLE INITIALLY DEFERRED")
        }
        return sql
    }

    /// The names of the indexes ``indexSQL`` creates, each with whether it is unique.
    var indexNames: [(name: String, isUnique: Bool)] {
        entity.uniquenessConstraints.indices.map { (uniqueIndexName($0), true) }
            + indexedProperties.map { ($0.name, false) }
    }

    /// The non-unique indexes ``indexSQL`` creates, by name, with the properties each is on: the
    /// declared ones, then each to-one column's own (`Entity.relationship.key`).
    var indexedProperties: [(name: String, properties: [String])] {
        createdIndices.map { (indexName("index.\($0.number)"), $0.names) }
            + columns.filter { $0.type == nil }.map { (indexName($0.name + ".key"), [$0.name]) }
    }

    /// The name of the unique index of constraint `number`.
    func uniqueIndexName(_ number: Int) -> String { indexName("unique.\(number)") }

    /// An index name unique in the namespace, within PostgreSQL's 63 bytes.
    private func indexName(_ suffix: String) -> String {
        let name = entity.name + "." + suffix
        guard name.utf8.count > 63 else { return name }
        var hash: UInt64 = 14_695_981_039_346_656_037
        for byte in name.utf8 { hash = (hash ^ UInt64(byte)) &* 1_099_511_628_211 }
        return String(name.unicodeScalars.prefix(20)) + "." + String(hash, radix: 36)
    }

    /// The property names of the unique constraint a unique-index name stands for.
    func constraint(named indexName: String) -> [String]? {
        entity.uniquenessConstraints.indices.first { uniqueIndexName($0) == indexName }
            .map { entity.uniquenessConstraints[$0] }
    }
}

/// An SQL identifier in double quotes, with quotes inside doubled.
func quote(_ name: String) -> String {
    // Without a quotation mark to double (the common case), no Foundation call: this runs for
    // every table and column name of a statement built per call.
    guard name.utf8.contains(UInt8(ascii: "\"")) else { return "\"" + name + "\"" }
    return "\"" + name.replacingOccurrences(of: "\"", with: "\"\"") + "\""
}
