import Foundation
import ModelStore

/// One ordered, windowed request of ``StoreDriver/checkOrderedWindows()``, with its ground truth.
struct OrderedRequest {
    let name: String
    let sort: [SortDescriptor<LogEntry>]
    let keys: [StoreSortKey]
    let predicate: Predicate<LogEntry>?
    let filter: StoreFilter?
    let offset: Int
    let limit: Int?

    /// The sequences Swift itself selects and orders from detached entries: the ground truth.
    func truth(_ entries: [LogEntry]) throws -> [Int] {
        let matches = sortedAsSwift(try entries.filter { try predicate?.evaluate($0) ?? true }, by: sort)
        return Array(matches.map(\.sequence).dropFirst(offset).prefix(limit ?? .max))
    }
}

extension StoreDriver {
    /// Labels with partial ties: case variants, and a combining spelling next to a precomposed one.
    static var orderingLabels: [String] { ["b", "B", "a", "A", "e\u{301}x", "éx", "É", "e"] }

    /// Requests whose order is fully defined (the last key is the unique `sequence`), with ties on the first keys.
    static var orderedRequests: [OrderedRequest] {
        let bucketThenLabel: [SortDescriptor<LogEntry>] = [
            SortDescriptor(\.bucket), SortDescriptor(\.label, comparator: .lexical, order: .reverse),
            SortDescriptor(\.sequence),
        ]
        let bucketThenLabelKeys = [
            StoreSortKey(property: "bucket"), StoreSortKey(property: "label", ascending: false, comparison: .lexical),
            StoreSortKey(property: "sequence"),
        ]
        let labelThenSequence: [SortDescriptor<LogEntry>] = [
            SortDescriptor(\.label, comparator: .lexical), SortDescriptor(\.sequence, order: .reverse),
        ]
        let labelThenSequenceKeys = [
            StoreSortKey(property: "label", comparison: .lexical), StoreSortKey(property: "sequence", ascending: false),
        ]
        let one = #Predicate<LogEntry> { $0.bucket == 1 }
        let oneFilter = StoreFilter.compare("bucket", .equal, .int(1))
        return [
            OrderedRequest(
                name: "sorted by bucket, label descending, sequence", sort: bucketThenLabel, keys: bucketThenLabelKeys,
                predicate: nil, filter: nil, offset: 0, limit: nil),
            OrderedRequest(
                name: "sorted by label, sequence descending", sort: labelThenSequence, keys: labelThenSequenceKeys,
                predicate: nil, filter: nil, offset: 0, limit: nil),
            OrderedRequest(
                name: "sorted by bucket, label descending, sequence; fetchOffset 4, fetchLimit 5",
                sort: bucketThenLabel,
                keys: bucketThenLabelKeys, predicate: nil, filter: nil, offset: 4, limit: 5),
            OrderedRequest(
                name: "bucket == 1 sorted by label, sequence descending; fetchOffset 1, fetchLimit 3",
                sort: labelThenSequence, keys: labelThenSequenceKeys, predicate: one, filter: oneFilter, offset: 1,
                limit: 3),
            OrderedRequest(
                name: "sorted by label, sequence descending; fetchOffset 14 (past most)", sort: labelThenSequence,
                keys: labelThenSequenceKeys, predicate: nil, filter: nil, offset: 14, limit: 10),
        ]
    }

    /// Sorts with partial ties and windows: fetch returns Swift's order, and fetchCount and
    /// fetchIdentifiers agree with it in number and order.
    func checkOrderedWindows() throws {
        let labels = Self.orderingLabels
        let numbers = Array(1...16)
        let ids = try saveEntries(
            try numbers.map { try newEntry($0, bucket: $0 % 3, label: labels[$0 % labels.count]) })
        let detached = numbers.map { number in
            let entry = LogEntry()
            entry.sequence = number
            entry.bucket = number % 3
            entry.label = labels[number % labels.count]
            return entry
        }
        var ran = 0
        for ordered in Self.orderedRequests {
            var descriptor = FetchDescriptor<LogEntry>(predicate: ordered.predicate, sortBy: ordered.sort)
            descriptor.fetchOffset = ordered.offset
            descriptor.fetchLimit = ordered.limit
            let query = StoreQuery(
                entityName: "LogEntry", filter: ordered.filter, sort: ordered.keys, offset: ordered.offset,
                limit: ordered.limit)
            let request = request(LogEntry.self, descriptor: descriptor, query: query)
            guard let snapshots = try fetch(request, "fetching entries \(ordered.name) directly") else { continue }
            ran += 1
            let expected = try ordered.truth(detached)
            let found = snapshots.map { snapshot -> Int in
                if case .int(let value)? = snapshot["sequence"] { return Int(truncatingIfNeeded: value) }
                return -1
            }
            if found != expected {
                let symptom =
                    found.sorted() == expected.sorted()
                    ? "the right entries in the wrong order (a sort key, its direction, its string comparison or "
                        + "the tie-break on the next key is wrong)"
                    : Set(expected).isSubset(of: Set(found))
                        ? "entries the filter or the window excludes (filter, offset or limit ignored)"
                        : "the wrong entries"
                throw env.failure(
                    "fetch \(ordered.name) directly returned \(symptom)", expected: "sequences \(expected)",
                    found: "sequences \(found)")
            }
            let count = try env.step("counting entries \(ordered.name) directly") { try store.fetchCount(request) }
            try env.check(
                count == expected.count,
                "fetchCount \(ordered.name) returned \(count) but fetch returned \(expected.count): count disagrees "
                    + "with fetch", expected: "\(expected.count)", found: "\(count)")
            let identifiers = try env.step("fetching identifiers \(ordered.name) directly") {
                try store.fetchIdentifiers(request)
            }
            let expectedIDs = expected.map { ids.indices.contains($0 - 1) ? ids[$0 - 1] : nil }
            try env.check(
                identifiers.map(Optional.some) == expectedIDs,
                "fetchIdentifiers \(ordered.name) returned other identifiers, or another order, than fetch: "
                    + "identifiers disagree with fetch",
                expected: "\(expectedIDs.map { $0.map(String.init(describing:)) ?? "nil" })",
                found: "\(identifiers)")
        }
        if ran == 0 {
            throw CaseNotApplicable(reason: "the store asks the context to sort or window every request in memory")
        }
    }
}
