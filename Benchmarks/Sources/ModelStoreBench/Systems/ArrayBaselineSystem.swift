import Foundation

/// A plain Swift array of structs doing the same work by hand: the physical limit.
///
/// Like the stores, it keeps a hash index on `name` and a unique hash index on `email`,
/// maintained on insert and used by the fetches; the scan is a loop. `open` reads a compact
/// binary file written by hand (length-prefixed strings, raw numbers) and rebuilds nothing else.
struct ArrayBaselineSystem: BenchSystem {
    /// The array and its indexes.
    struct Store {
        var users: [UserRow] = []
        var byName: [String: [Int]] = [:]
        var byEmail: [String: Int] = [:]

        init(capacity: Int) {
            users.reserveCapacity(capacity)
            byEmail.reserveCapacity(capacity)
        }

        /// Appends the rows, refusing a duplicate email as a unique index would.
        mutating func insert(_ rows: [UserRow]) throws {
            for row in rows {
                let position = users.count
                if byEmail.updateValue(position, forKey: row.email) != nil {
                    throw WrongResult("insert: duplicate email")
                }
                byName[row.name, default: []].append(position)
                users.append(row)
            }
        }
    }

    /// A store holding every user, built untimed.
    private func filledStore(_ data: Dataset) throws -> Store {
        var store = Store(capacity: data.count)
        try store.insert(data.rows)
        return store
    }

    func insert(_ data: Dataset, _ directory: URL) throws -> Trial {
        Trial(
            path: "append structs, maintain name and email hash indexes",
            run: { _ in
                var store = Store(capacity: data.count)
                try store.insert(data.rows)
                return store
            },
            check: { store, _ in try Expect.count(store.users.count, data.count, "insert") })
    }

    func fetchIndexed(_ data: Dataset, _ directory: URL) throws -> Trial {
        let store = try filledStore(data)
        return Trial(
            path: "name index lookup, copy, sort by (age, position)",
            run: { _ in
                (store.byName[Dataset.indexedName] ?? [])
                    .sorted { (store.users[$0].age, $0) < (store.users[$1].age, $1) }
                    .map { store.users[$0] }
            },
            check: { users, _ in
                try Expect.count(users.count, data.indexedNameCount, "fetch-indexed")
                try Expect.sortedByAge(users.map(\.age))
            })
    }

    func fetchUnique(_ data: Dataset, _ directory: URL) throws -> Trial {
        let store = try filledStore(data)
        return Trial(
            path: "email index lookup, copy",
            run: { repetition in store.byEmail[data.rows[data.lookupTarget(repetition)].email].map { store.users[$0] }
            },
            check: { user, repetition in
                if user?.email != data.rows[data.lookupTarget(repetition)].email {
                    throw WrongResult("fetch-unique: wrong user")
                }
            })
    }

    func fetchScan(_ data: Dataset, _ directory: URL) throws -> Trial {
        let store = try filledStore(data)
        return Trial(
            path: "filter loop over the structs",
            run: { _ in store.users.filter(Dataset.matchesScan) },
            check: { users, _ in try Expect.count(users.count, data.scanMatchCount, "fetch-scan") })
    }

    func fetchAll(_ data: Dataset, _ directory: URL) throws -> Trial {
        let store = try filledStore(data)
        return Trial(
            path: "copy every struct into a new array",
            run: { _ in store.users.map { $0 } },
            check: { users, repetition in
                try Expect.everyUser(users, email: \.email, age: \.age, repetition: repetition, of: data)
            })
    }

    func updateOne(_ data: Dataset, _ directory: URL) throws -> Trial {
        var store = try filledStore(data)
        return Trial(
            path: "assign one field in place",
            run: { repetition in
                let position = data.lookupTarget(repetition)
                store.users[position].score = Double(repetition) + 0.5
                return position
            },
            check: { position, repetition in
                if store.users[position].score != Double(repetition) + 0.5 {
                    throw WrongResult("update-one: not stored")
                }
            })
    }

    func open(_ data: Dataset, _ directory: URL) throws -> Trial {
        let url = directory.appendingPathComponent("users.bin")
        try BinaryUsers.encode(data.rows).write(to: url)
        return Trial(
            path: "read a hand-written binary file, decode the structs",
            run: { _ in try BinaryUsers.decode(Data(contentsOf: url)) },
            check: { users, _ in
                try Expect.count(users.count, data.count, "open")
                if users.last != data.rows.last { throw WrongResult("open: decoded data differs") }
            })
    }

    func deleteAll(_ data: Dataset, _ directory: URL) throws -> Trial {
        var store = Store(capacity: 0)
        return Trial(
            path: "removeAll on the array and both indexes (memory freed)",
            prepare: { _ in store = try filledStore(data) },
            run: { _ in
                store.users.removeAll()
                store.byName.removeAll()
                store.byEmail.removeAll()
                return store.users.count
            },
            check: { count, _ in try Expect.count(count, 0, "delete-all") })
    }
}

/// The array baseline's file: for each user, name and email as a 32-bit length plus UTF-8 bytes,
/// age as a 64-bit integer, joined and score as 64-bit floats, all little-endian.
enum BinaryUsers {
    static func encode(_ rows: [UserRow]) -> Data {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(rows.count * 64)
        func append<T: FixedWidthInteger>(_ value: T) {
            withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) }
        }
        func append(_ string: String) {
            append(UInt32(string.utf8.count))
            bytes.append(contentsOf: string.utf8)
        }
        append(UInt64(rows.count))
        for row in rows {
            append(row.name)
            append(Int64(row.age))
            append(row.email)
            append(row.joined.timeIntervalSinceReferenceDate.bitPattern)
            append(row.score.bitPattern)
        }
        return Data(bytes)
    }

    static func decode(_ data: Data) throws -> [UserRow] {
        try data.withUnsafeBytes { buffer -> [UserRow] in
            var offset = 0
            func read<T: FixedWidthInteger>(_: T.Type) throws -> T {
                guard offset + MemoryLayout<T>.size <= buffer.count else { throw WrongResult("open: truncated file") }
                defer { offset += MemoryLayout<T>.size }
                return T(littleEndian: buffer.loadUnaligned(fromByteOffset: offset, as: T.self))
            }
            func readString() throws -> String {
                let length = Int(try read(UInt32.self))
                guard offset + length <= buffer.count else { throw WrongResult("open: truncated file") }
                defer { offset += length }
                return String(
                    decoding: UnsafeRawBufferPointer(rebasing: buffer[offset..<offset + length]), as: UTF8.self)
            }
            let count = Int(try read(UInt64.self))
            var rows: [UserRow] = []
            rows.reserveCapacity(count)
            for _ in 0..<count {
                let name = try readString()
                let age = Int(try read(Int64.self))
                let email = try readString()
                let joined = Date(timeIntervalSinceReferenceDate: Double(bitPattern: try read(UInt64.self)))
                let score = Double(bitPattern: try read(UInt64.self))
                rows.append(UserRow(name: name, age: age, email: email, joined: joined, score: score))
            }
            return rows
        }
    }
}
