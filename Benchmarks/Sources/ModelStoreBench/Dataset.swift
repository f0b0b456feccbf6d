import Foundation

/// One "simple user", as every system receives it: the source the timed code copies from.
struct UserRow: Sendable, Hashable, Codable {
    var name: String
    var age: Int
    var email: String
    var joined: Date
    var score: Double
}

/// The users of one benchmark, generated deterministically, with the answers every system must give.
///
/// The same seed gives every system the same data. About 200 users per million are named
/// "Jane" (`fetch-indexed`), every email is unique (`fetch-unique`), and the three-condition
/// scan matches about 2% of users.
struct Dataset: Sendable {
    /// The name `fetch-indexed` looks for.
    static let indexedName = "Jane"
    /// The page size of `open-page`.
    static let pageSize = 20
    /// Users at multiples of this index are named ``indexedName``: 200 per million.
    static let indexedNameStride = 5_000
    /// The scan's lower bound on age.
    static let scanMinimumAge = 65
    /// The scan's lower bound on score.
    static let scanMinimumScore = 900.0
    /// The scan's upper bound on the joined date (exclusive): the middle of the joined range.
    static let scanJoinedBefore = Date(timeIntervalSinceReferenceDate: 10 * 365 * 86_400)

    let rows: [UserRow]
    /// How many users are named ``indexedName``.
    let indexedNameCount: Int
    /// How many users the scan matches.
    let scanMatchCount: Int
    /// Users to look up by email, one per repetition, in a scattered order.
    let lookupTargets: [Int]
    /// The raw size of the data: the UTF-8 bytes of the strings plus 8 bytes per number and date.
    let rawBytes: Int

    var count: Int { rows.count }

    /// Generates `count` users from a fixed seed.
    init(count: Int) {
        var random = SplitMix64(seed: 0x5EED_0F_0DE1_5702)
        let names = Self.firstNames
        var rows: [UserRow] = []
        rows.reserveCapacity(count)
        var rawBytes = 0
        for index in 0..<count {
            let name =
                index % Self.indexedNameStride == 0 ? Self.indexedName : names[Int(random.next() % UInt64(names.count))]
            let row = UserRow(
                name: name,
                age: 18 + Int(random.next() % 73),
                email: "user\(index)@example.com",
                joined: Date(timeIntervalSinceReferenceDate: Double(random.next() % (20 * 365 * 86_400))),
                score: Double(random.next() % 100_000) / 100)
            rawBytes += row.name.utf8.count + row.email.utf8.count + 3 * 8
            rows.append(row)
        }
        self.rows = rows
        self.rawBytes = rawBytes
        indexedNameCount = rows.lazy.filter { $0.name == Self.indexedName }.count
        scanMatchCount = rows.lazy.filter(Self.matchesScan).count
        lookupTargets = (0..<256).map { _ in Int(random.next() % UInt64(max(count, 1))) }
    }

    /// The scan's three conditions, written by hand.
    @inline(__always)
    static func matchesScan(_ row: UserRow) -> Bool {
        row.age >= scanMinimumAge && row.score >= scanMinimumScore && row.joined < scanJoinedBefore
    }

    /// The user a repetition looks up.
    func lookupTarget(_ repetition: Int) -> Int { lookupTargets[repetition % lookupTargets.count] }

    /// First names other than ``indexedName``.
    static let firstNames = [
        "Ada", "Alan", "Alice", "Amir", "Anna", "Ben", "Bruno", "Carla", "Chen", "Chloe", "Dan", "Dana", "Elena",
        "Emma", "Eric", "Fatima", "Felix", "Grace", "Hana", "Hugo", "Ines", "Ivan", "Jack", "Joao", "John",
        "Julia", "Karim", "Kate", "Lars", "Laura", "Leo", "Lina", "Luca", "Maya", "Mia", "Nadia", "Noah", "Nora",
        "Omar", "Oscar", "Paula", "Pedro", "Priya", "Quinn", "Rosa", "Ruth", "Sam", "Sara", "Sofia", "Tariq",
        "Tom", "Uma", "Vera", "Victor", "Wei", "Yara", "Yusuf", "Zoe",
    ]
}

/// A small, fast, deterministic generator (SplitMix64), so every system sees identical data.
struct SplitMix64: RandomNumberGenerator {
    private var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
