import Foundation

/// A user as Foundation's JSON coders see it: the row plus the identity a store gives it.
struct JSONUserRecord: Codable, Sendable {
    var id: Int
    var name: String
    var age: Int
    var email: String
    var joined: Date
    var score: Double

    init(id: Int, _ row: UserRow) {
        self.id = id
        name = row.name
        age = row.age
        email = row.email
        joined = row.joined
        score = row.score
    }
}

/// Foundation's `JSONEncoder` and `JSONDecoder` over the same records, as a whole-file store
/// would use them: every save encodes everything and replaces the file durably. The baseline
/// for the JSON-file adapter.
struct FoundationJSONSystem: BenchSystem {
    func notApplicable(_ workload: Workload) -> String? {
        switch workload {
        case .updateLive: "live queries are ModelStore's (LiveQuery)"
        case .fetchIndexed, .fetchUnique, .fetchScan:
            "a file format, not a query engine: filtering decoded structs is what array-baseline measures"
        case .openPage: "a file format: a first page is a whole decode, which is what open measures"
        case .fetchAll: "a file format: every record comes from a whole decode, which is what open measures"
        case .hierarchyBase, .hierarchyFlat, .hierarchySubclass: Workload.hierarchyNotApplicable
        case .insert, .updateOne, .open, .deleteAll: nil
        }
    }

    private static func records(_ data: Dataset) -> [JSONUserRecord] {
        data.rows.enumerated().map { JSONUserRecord(id: $0.offset + 1, $0.element) }
    }

    private static func url(_ directory: URL) -> URL { directory.appendingPathComponent("users.json") }

    func insert(_ data: Dataset, _ directory: URL) throws -> Trial {
        let url = Self.url(directory)
        return Trial(
            path: "build records, JSONEncoder().encode, durable file replace",
            prepare: { _ in try? FileManager.default.removeItem(at: url) },
            run: { _ in
                let encoded = try JSONEncoder().encode(Self.records(data))
                try DurableFile.write(encoded, to: url)
                return encoded.count
            },
            check: { bytes, _ in if bytes < data.rawBytes { throw WrongResult("insert: the JSON is too small") } })
    }

    func open(_ data: Dataset, _ directory: URL) throws -> Trial {
        let url = Self.url(directory)
        try DurableFile.write(try JSONEncoder().encode(Self.records(data)), to: url)
        return Trial(
            path: "read the file, JSONDecoder().decode([Record].self)",
            run: { _ in try JSONDecoder().decode([JSONUserRecord].self, from: try Data(contentsOf: url)) },
            check: { records, _ in try Expect.count(records.count, data.count, "open") })
    }

    func updateOne(_ data: Dataset, _ directory: URL) throws -> Trial {
        let url = Self.url(directory)
        var records = Self.records(data)
        return Trial(
            path: "change one record, encode everything, durable file replace",
            run: { repetition in
                records[data.lookupTarget(repetition)].score = Double(repetition) + 0.5
                let encoded = try JSONEncoder().encode(records)
                try DurableFile.write(encoded, to: url)
                return encoded.count
            },
            check: { _, repetition in
                guard repetition == 0 else { return }
                let stored = try JSONDecoder().decode([JSONUserRecord].self, from: try Data(contentsOf: url))
                if stored[data.lookupTarget(0)].score != 0.5 {
                    throw WrongResult("update-one: the change was not stored")
                }
            })
    }

    func deleteAll(_ data: Dataset, _ directory: URL) throws -> Trial {
        let url = Self.url(directory)
        var records: [JSONUserRecord] = []
        return Trial(
            path: "remove every record, encode the empty array, durable file replace",
            prepare: { _ in records = Self.records(data) },
            run: { _ in
                records.removeAll()
                try DurableFile.write(try JSONEncoder().encode(records), to: url)
                return records.count
            },
            check: { count, _ in
                try Expect.count(count, 0, "delete-all")
                let stored = try JSONDecoder().decode([JSONUserRecord].self, from: try Data(contentsOf: url))
                try Expect.count(stored.count, 0, "delete-all, read back")
            })
    }
}
