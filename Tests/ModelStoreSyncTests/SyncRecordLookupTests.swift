import Foundation
import ModelStore
import ModelStoreAdapters
import ModelStoreSyncTestSupport
import ModelStoreTestSupport
import Testing

@testable import ModelStoreSync

/// How a batch of global identifiers finds its records (`RecordIndex.records(holding:in:store:)`):
/// identifiers a replica derived from nearby keys as one range of `globalID`, any other batch as a
/// list, and either way exactly the records that hold them.
@Suite struct SyncRecordLookupTests {
    let directory: TemporaryDirectory

    init() throws { directory = try TemporaryDirectory() }

    static let recordEntity = SyncMetadata.recordEntityName(for: "Journey")
    static let derivation = ReplicaGlobalIDs(replica: "replica-1", entities: ["Journey", "Leg"])

    static func derived(_ keys: some Sequence<Int64>, entity: String = "Journey") -> [String] {
        keys.map { derivation.globalID(entity: entity, key: $0) }
    }

    @Test func derivedIdentifiersOfNearbyKeysAreOneRangeAndOthersAList() {
        var generator = SplitMix64(seed: 42)
        let dense = Self.derived(1...1000).shuffled(using: &generator)
        guard case .range(let least, let greatest, let limit) = RecordIndex.lookup(of: dense) else {
            Issue.record("1,000 identifiers of keys 1…1000 are not read as a range")
            return
        }
        #expect(least == Self.derivation.globalID(entity: "Journey", key: 1))
        #expect(greatest == Self.derivation.globalID(entity: "Journey", key: 1000))
        #expect(limit == 4 * 1000 + RecordIndex.leastRangeLookup)
        // Keys four apart on average still make a range; further apart, or a few, or of two
        // entities, or minted at random, a list.
        #expect(RecordIndex.lookup(of: Self.derived(stride(from: 0, to: 399, by: 4))) != .list)
        #expect(RecordIndex.lookup(of: Self.derived(stride(from: 0, to: 500, by: 5))) == .list)
        #expect(RecordIndex.lookup(of: Self.derived(stride(from: 0, to: 100_000, by: 100))) == .list)
        #expect(RecordIndex.lookup(of: Self.derived(1...15)) == .list)
        #expect(RecordIndex.lookup(of: Self.derived(1...100) + Self.derived(1...100, entity: "Leg")) == .list)
        #expect(RecordIndex.lookup(of: (0..<1000).map { _ in UUID().uuidString }) == .list)
        #expect(RecordIndex.lookup(of: (0..<100).map { "journey-\($0)" }) == .list)
        // Written otherwise (lower-case digits sort elsewhere): a list.
        #expect(RecordIndex.lookup(of: Self.derived(1...100).map { $0.lowercased() }) == .list)
        for global in Self.derived([0, 1, 255, 1 << 40, .max, -1]) + [UUID().uuidString] {
            #expect(
                RecordIndex.bits(of: global).map { [$0.high, $0.low] }
                    == ReplicaGlobalIDs.halves(of: global).map { [$0.high, $0.low] })
        }
        for text in ["", "journey", UUID().uuidString.lowercased(), "{" + UUID().uuidString + "}"] {
            #expect(RecordIndex.bits(of: text) == nil, "\(text)")
        }
    }

    func store(_ scheme: String) throws -> (ModelContainer, SyncStore) {
        let url = scheme == "memory" ? "memory:" : scheme + ":" + directory.path("records." + scheme)
        let container = try ModelContainer(for: Replica.schema, url: url)
        return (container, SyncStore(store: container.stores[0], schema: container.schema, author: "test"))
    }

    func insertRecords(_ globals: [String], into store: SyncStore) throws {
        let entity = try store.entity(Self.recordEntity)
        let records = try globals.map {
            try SyncRecord.new(entity: entity, globalID: $0, model: nil, base: nil, stamps: [:]).snapshot
        }
        try store.save(inserted: records, updated: [], deleted: [])
    }

    func found(_ globals: [String], in store: SyncStore) throws -> Set<String> {
        let records = try RecordIndex.records(holding: globals, in: Self.recordEntity, store: store)
        let ids = records.map { SyncRecord(snapshot: $0).globalID }
        #expect(ids.count == Set(ids).count, "a record found twice")
        return Set(ids)
    }

    /// Whatever the batch, the records found are exactly those holding its identifiers: a range
    /// leaves out the records between that were not asked for, and one holding more records than
    /// its limit (text that sorts between two identifiers without being one) is read as a list.
    @Test(arguments: ["sqlite", "log", "json", "memory"])
    func theRecordsFoundAreExactlyThoseHoldingTheIdentifiers(scheme: String) throws {
        let (_, store) = try store(scheme)
        let stored = Self.derived(1...300)
        let strays = (0..<200).map { "\(stored[99])-\($0)" }  // sort between keys 100 and 101
        let random = (0..<50).map { _ in UUID().uuidString }
        try insertRecords(stored + strays + random, into: store)

        // Keys 50…250 without every third, and keys 301…320 that have no record: a range.
        let dense = Self.derived((50...250).filter { $0 % 3 != 0 }) + Self.derived(301...320)
        #expect(RecordIndex.lookup(of: dense) != .list)
        #expect(try found(dense, in: store) == Set(Self.derived((50...250).filter { $0 % 3 != 0 })))

        // Keys 90…110: a range of 21 identifiers and 221 records, more than its limit of 100.
        let crowded = Self.derived(90...110)
        guard case .range(_, _, let limit) = RecordIndex.lookup(of: crowded) else {
            Issue.record("keys 90…110 are not read as a range")
            return
        }
        #expect(limit < 221)
        #expect(try found(crowded, in: store) == Set(crowded))

        // A list: identifiers far apart, random ones, and ones no record holds.
        let sparse = Self.derived(stride(from: 1, to: 300, by: 20)) + random.prefix(10) + Self.derived([900, 901])
        #expect(RecordIndex.lookup(of: sparse) == .list)
        #expect(
            try found(sparse, in: store) == Set(Self.derived(stride(from: 1, to: 300, by: 20)) + random.prefix(10)))
        #expect(try found([], in: store).isEmpty)
    }
}
