import Foundation
import ModelStore
import ModelStoreTooling
import PostgresNIO

extension StoreCatalog {
    /// At most this many rows that refer nowhere are listed per relationship; the rest are counted.
    static let listedDanglingRows = 20

    /// Everything wrong with the namespace for the schema it records, and the exact number of models
    /// of each entity whose table could be read:
    ///
    /// - the meta table's rows (`format`, `identifier`, the history counters), and a storage format
    ///   this build can open;
    /// - each entity's table with `_pk`, `_version` and a column of the expected SQL type per
    ///   attribute and to-one relationship, and each to-many relationship's join table;
    /// - the indexes the schema asks for (unique ones unique), each valid, and the foreign keys;
    /// - the key sequence, which must be past every key the tables hold (or new models would
    ///   collide with old ones);
    /// - the history table, and a history counter not behind its newest transaction;
    /// - every to-one reference and join-table row pointing at a model its destination holds.
    func problems(
        _ description: Schema.Description, meta: [String: String]
    ) async throws -> (problems: [StoreProblem], counts: [StoreEntityCount]) {
        var problems: [StoreProblem] = []
        func problem(_ table: String, _ reason: String) {
            problems.append(StoreProblem(file: place(table), offset: nil, reason: reason))
        }
        let metaTable = "modelstore_meta"
        let format = meta["format"].flatMap(Int.init)
        if let format, format > StoreOpener.formatVersion {
            problem(
                metaTable,
                "the storage format \(format) is newer than this build's \(StoreOpener.formatVersion), so the store "
                    + "cannot be opened")
        }
        for key in ["format", "identifier", HistoryLog.lastKey, HistoryLog.expiredKey] where meta[key] == nil {
            problem(metaTable, "the row '\(key)' is missing")
        }
        let schema: Schema
        do {
            schema = try Schema(description)
        } catch {
            problem(metaTable, "the recorded schema is not consistent: \(error)")
            return (problems, [])
        }
        let layouts = TableLayout.layouts(of: schema, namespace: namespace)
        let tables = try await tables()
        let columns = try await columns()
        let indexes = Dictionary(try await indexes().map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        let foreignKeys = try await foreignKeys()

        var readable: [TableLayout] = []
        for entity in schema.entities {
            guard let layout = layouts[entity.name] else { continue }
            guard let found = columns[entity.name] else {
                problem(entity.name, "the table of '\(entity.name)' is missing")
                continue
            }
            for (name, type) in [("_pk", "bigint"), ("_version", "bigint")] where found[name] != type {
                problem(entity.name, columnProblem(name, expected: type, found: found[name]))
            }
            for column in layout.columns {
                let expected = column.type?.declaration ?? "bigint"
                guard found[column.name] != expected else { continue }
                problem(entity.name, columnProblem(column.name, expected: expected, found: found[column.name]))
            }
            for column in layout.columns where column.type == nil && found[column.name] == "bigint" {
                if let destination = column.destination, !foreignKeys.contains([entity.name, column.name, destination])
                {
                    problem(entity.name, "the column '\(column.name)' has no foreign key to '\(destination)'")
                }
            }
            for join in layout.joinTables {
                let name = entity.name + "." + join.name
                guard let joinColumns = columns[name] else {
                    problem(name, "the join table of '\(entity.name).\(join.name)' is missing")
                    continue
                }
                for (column, type) in [("owner", "bigint"), ("position", "integer"), ("target", "bigint")]
                where joinColumns[column] != type {
                    problem(name, columnProblem(column, expected: type, found: joinColumns[column]))
                }
                for (column, target) in [("owner", entity.name), ("target", join.destination)]
                where !foreignKeys.contains([name, column, target]) {
                    problem(name, "the column '\(column)' has no foreign key to '\(target)'")
                }
            }
            for (indexName, isUnique) in layout.indexNames {
                guard let index = indexes[indexName] else {
                    problem(entity.name, "the index '\(indexName)' is missing")
                    continue
                }
                if isUnique && !index.isUnique { problem(entity.name, "the index '\(indexName)' is not unique") }
            }
            // Counted, and its references checked, as far as its key is there.
            if found["_pk"] == "bigint" { readable.append(layout) }
        }
        for index in indexes.values.sorted(by: { $0.name < $1.name }) where !index.isValid {
            problem(
                index.table, "the index '\(index.name)' is invalid (an interrupted build); the server does not use it")
        }

        var counts: [StoreEntityCount] = []
        var largestKey: Int64 = 0
        for layout in readable {
            let rows = try await rowCount(ofTable: layout.entity.name, estimate: nil, exactly: true)
            counts.append(StoreEntityCount(name: layout.entity.name, modelCount: rows.rows))
            largestKey = max(largestKey, try await session.integer("SELECT max(_pk) FROM \(layout.table)") ?? 0)
            problems += try await danglingReferences(from: layout, among: readable, columns: columns)
        }
        problems += try await keySequenceProblems(largestKey: largestKey)
        problems += try await historyProblems(tables: tables, meta: meta)
        return (problems, counts)
    }

    private func columnProblem(_ name: String, expected: String, found: String?) -> String {
        guard let found else { return "the column '\(name)' is missing" }
        return "the column '\(name)' is of type '\(found)', not '\(expected)'"
    }

    /// The key sequence must exist and have given a number past every key the tables hold.
    private func keySequenceProblems(largestKey: Int64) async throws -> [StoreProblem] {
        let sequence = "modelstore_keys"
        var binds = PostgresBindings()
        binds.append(qualified(sequence))
        let exists = try await session.query("SELECT to_regclass($1) IS NOT NULL", binds)
        guard try exists.first?.decode(Bool.self) == true else {
            return [StoreProblem(file: place(sequence), offset: nil, reason: "the key sequence is missing")]
        }
        let rows = try await session.query("SELECT last_value, is_called FROM \(qualified(sequence))")
        guard let row = rows.first else { return [] }
        let (last, called) = try row.decode((Int64, Bool).self)
        let given = called ? last : last - 1
        guard given < largestKey else { return [] }
        return [
            StoreProblem(
                file: place(sequence), offset: nil,
                reason: "the key sequence has given keys up to \(given), but a table holds the key \(largestKey): new "
                    + "models would take keys in use (SELECT setval('\(qualified(sequence))', \(largestKey)) mends it)")
        ]
    }

    /// The history table must exist, and the counter of numbers must not be behind its newest row.
    private func historyProblems(tables: [String: Table], meta: [String: String]) async throws -> [StoreProblem] {
        let table = "modelstore_history"
        guard tables[table] != nil else {
            return [StoreProblem(file: place(table), offset: nil, reason: "the history table is missing")]
        }
        guard let range = try await historyRange(tables), let last = meta[HistoryLog.lastKey].flatMap(Int64.init),
            range.newest > last
        else { return [] }
        return [
            StoreProblem(
                file: place(table), offset: nil,
                reason: "the history holds transaction \(range.newest), past the counter '\(HistoryLog.lastKey)' "
                    + "(\(last)): the next save would take a number in use")
        ]
    }

    /// The rows of an entity whose to-one references, or whose join-table rows, point at a key the
    /// destination's table does not hold (foreign keys prevent this unless one was dropped); the
    /// columns and join tables that are missing or of another type are reported elsewhere.
    private func danglingReferences(
        from layout: TableLayout, among readable: [TableLayout], columns: [String: [String: String]]
    ) async throws -> [StoreProblem] {
        let tables = Dictionary(readable.map { ($0.entity.name, $0.table) }, uniquingKeysWith: { first, _ in first })
        var queries: [(name: String, table: String, sql: String)] = []
        for column in layout.columns where column.type == nil && columns[layout.entity.name]?[column.name] == "bigint" {
            guard let destination = column.destination.flatMap({ tables[$0] }) else { continue }
            queries.append(
                (
                    column.name, layout.entity.name,
                    "SELECT t._pk, t.\(column.quoted) FROM \(layout.table) t WHERE t.\(column.quoted) IS NOT NULL "
                        + "AND NOT EXISTS (SELECT 1 FROM \(destination) d WHERE d._pk = t.\(column.quoted)) ORDER BY 1"
                ))
        }
        for join in layout.joinTables {
            let joinColumns = columns[layout.entity.name + "." + join.name] ?? [:]
            guard let destination = tables[join.destination], joinColumns["owner"] == "bigint",
                joinColumns["target"] == "bigint"
            else { continue }
            queries.append(
                (
                    join.name, layout.entity.name + "." + join.name,
                    "SELECT j.owner, j.target FROM \(join.table) j WHERE NOT EXISTS "
                        + "(SELECT 1 FROM \(destination) d WHERE d._pk = j.target) ORDER BY 1, 2"
                ))
        }
        var problems: [StoreProblem] = []
        for (name, table, sql) in queries {
            let rows = try await session.query(sql)
            for row in rows.prefix(Self.listedDanglingRows) {
                let (key, target) = try row.decode((Int64, Int64).self)
                problems.append(
                    StoreProblem(
                        file: place(table), offset: nil,
                        reason: "row \(key) of '\(layout.entity.name)' refers through '\(name)' to the key \(target), "
                            + "which '\(layout.entity.name).\(name)''s destination does not hold"))
            }
            if rows.count > Self.listedDanglingRows {
                problems.append(
                    StoreProblem(
                        file: place(table), offset: nil,
                        reason: "\(rows.count - Self.listedDanglingRows) more rows refer through '\(name)' to keys "
                            + "its destination does not hold"))
            }
        }
        return problems
    }
}
