import Foundation
import ModelStore
import ModelStoreTestSupport
import Testing

@testable import ModelStoreSync

/// The compact form of records' base values and stamps: every kind of value comes back equal, and
/// records written as JSON still read.
@Suite struct SyncRecordCodingTests {
    static let values: [String: StoreValue] = [
        "null": .null, "yes": .bool(true), "no": .bool(false), "int": .int(-42), "big": .int(.max),
        "uint": .uint(.max), "double": .double(-0.1), "nan": .double(.infinity), "text": .string("Lisboa é bela"),
        "empty": .string(""), "date": .date(Date(timeIntervalSinceReferenceDate: 123.456_789)),
        "data": .data(Data([0, 1, 0xFF])), "uuid": .uuid(UUID()), "decimal": .decimal(Decimal(string: "1.25")!),
        "url": .url(URL(string: "https://example.com/a?b=c")!), "array": .array([.int(1), .string("x")]),
        "dictionary": .dictionary(["k": .bool(true)]),
        "global": .reference(SyncModelState.reference(to: "6F1D…", entity: "Journey")),
        "globals": .references([SyncModelState.reference(to: "A", entity: "Leg")]),
    ]

    @Test func everyKindOfValueComesBackEqual() throws {
        let data = SyncCoding.encodeValues(Self.values)
        #expect(data.first == 0xB1)
        #expect(SyncCoding.decodeValues(data) == Self.values)
        #expect(SyncCoding.decodeValues(SyncCoding.encodeValues([:])) == [:])
    }

    @Test func stampsComeBackEqual() throws {
        let stamps = [
            "budget": SyncStamp(milliseconds: 1_764_000_000_123, counter: 7, replica: "r-1"),
            "notes": SyncStamp(milliseconds: -1, counter: .max, replica: ""),
        ]
        #expect(SyncCoding.decodeStamps(SyncCoding.encodeStamps(stamps)) == stamps)
    }

    @Test func propertiesSharingAStampStoreItOnce() throws {
        let shared = SyncStamp(
            milliseconds: 1_764_000_000_123, counter: 2, replica: "3F2504E0-4F89-11D3-9A0C-0305E82C3301")
        let names = ["name", "email", "age", "score", "joined"]
        let stamps = Dictionary(uniqueKeysWithValues: names.map { ($0, shared) })
        let data = SyncCoding.encodeStamps(stamps)
        #expect(data.first == 0xB3)
        #expect(SyncCoding.decodeStamps(data) == stamps)
        // The replica's identifier once, not once per property.
        let replica = Array(shared.replica.utf8)
        let bytes = Array(data)
        let occurrences = (0...(bytes.count - replica.count)).filter {
            Array(bytes[$0..<$0 + replica.count]) == replica
        }
        #expect(occurrences.count == 1)
    }

    /// Seeded random stamps, from one distinct stamp to more than the eight the writer groups by
    /// comparison before it switches to a dictionary: each comes back with its own properties, and
    /// each distinct stamp is written once.
    @Test func randomStampsComeBackEqualWithEachStampOnce() throws {
        let seed = UInt64.random(in: 0...UInt64.max)
        var random = SplitMix64(seed: seed)
        for _ in 0..<300 {
            let pool = (0..<Int.random(in: 1...20, using: &random)).map { position in
                SyncStamp(
                    milliseconds: Int64.random(in: 0...3, using: &random), counter: Int32(position % 3),
                    replica: ["r-1", "r-2", "3F2504E0-4F89-11D3-9A0C-0305E82C3301"][position % 3])
            }
            var stamps: [String: SyncStamp] = [:]
            for property in 0..<Int.random(in: 0...40, using: &random) {
                stamps["p\(property)"] = pool.randomElement(using: &random)!
            }
            let data = SyncCoding.encodeStamps(stamps)
            #expect(SyncCoding.decodeStamps(data) == stamps, "seed \(seed)")
            // The count of groups (one byte while below 128) is the count of distinct stamps.
            #expect(Int(data[1]) == Set(stamps.values).count, "seed \(seed)")
        }
    }

    /// The identifiers' text written and read without Foundation's formatter and parser: the same
    /// text `uuidString` writes, and the same UUIDs `UUID(uuidString:)` reads (or none, where it
    /// reads none).
    @Test func uuidTextMatchesFoundation() throws {
        let seed = UInt64.random(in: 0...UInt64.max)
        var random = SplitMix64(seed: seed)
        func halves(_ uuid: UUID) -> (UInt64, UInt64) {
            withUnsafeBytes(of: uuid.uuid) { bytes in
                (
                    bytes.prefix(8).reduce(UInt64(0)) { $0 << 8 | UInt64($1) },
                    bytes.suffix(8).reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
                )
            }
        }
        let alphabet = Array("0123456789abcdefABCDEFg- \u{0}é")
        for _ in 0..<2000 {
            var bytes = (0..<16).map { _ in UInt8.random(in: 0...255, using: &random) }
            if Bool.random(using: &random) { bytes = bytes.map { $0 & 0x0F } }
            let uuid = bytes.withUnsafeBytes { UUID(uuid: $0.load(as: uuid_t.self)) }
            let text = SyncCoding.uuidString(uuid)
            #expect(text == uuid.uuidString, "seed \(seed)")
            for candidate in [text, text.lowercased()] {
                let read = try #require(ReplicaGlobalIDs.halves(of: candidate), "seed \(seed): \(candidate)")
                #expect(read == halves(uuid), "seed \(seed): \(candidate)")
            }
            // One character changed, dropped or added: read exactly when Foundation reads it (it
            // reads some such variants), as the same UUID.
            var characters = Array(text)
            switch Int.random(in: 0..<3, using: &random) {
            case 0: characters[Int.random(in: 0..<36, using: &random)] = alphabet.randomElement(using: &random)!
            case 1: characters.remove(at: Int.random(in: 0..<36, using: &random))
            default:
                characters.insert(alphabet.randomElement(using: &random)!, at: Int.random(in: 0...36, using: &random))
            }
            let changed = String(characters)
            let expected = UUID(uuidString: changed).map(halves)
            let read = ReplicaGlobalIDs.halves(of: changed)
            #expect(read?.high == expected?.0 && read?.low == expected?.1, "seed \(seed): \(changed.debugDescription)")
        }
    }

    @Test func stampsWrittenOncePerPropertyStillRead() {
        // 0xB2, one stamp: "budget", milliseconds 5, counter 1, replica "a".
        var data: [UInt8] = [0xB2, 0x01, 0x06] + Array("budget".utf8)
        data += [5, 0, 0, 0, 0, 0, 0, 0] + [1, 0, 0, 0, 0, 0, 0, 0] + [0x01] + Array("a".utf8)
        #expect(
            SyncCoding.decodeStamps(Data(data)) == ["budget": SyncStamp(milliseconds: 5, counter: 1, replica: "a")])
    }

    @Test func recordsWrittenAsJSONStillRead() throws {
        let values: [String: StoreValue] = ["budget": .int(3), "name": .string("Porto")]
        #expect(SyncCoding.decodeValues(try JSONEncoder().encode(values)) == values)
        let stamps = ["budget": SyncStamp(milliseconds: 5, counter: 1, replica: "a")]
        #expect(SyncCoding.decodeStamps(try JSONEncoder().encode(stamps)) == stamps)
    }

    @Test func aCutOrEmptyBlobReadsAsNothing() {
        let data = SyncCoding.encodeValues(Self.values)
        #expect(SyncCoding.decodeValues(data.prefix(data.count - 3)) == nil)
        #expect(SyncCoding.decodeValues(Data()) == nil)
        #expect(SyncCoding.decodeStamps(Data([0xB2, 0x05])) == nil)
        let stamps = SyncCoding.encodeStamps(["budget": SyncStamp(milliseconds: 5, counter: 1, replica: "a")])
        #expect(SyncCoding.decodeStamps(stamps.prefix(stamps.count - 1)) == nil)
        #expect(SyncCoding.decodeStamps(Data([0xB3, 0x05])) == nil)
    }

    /// Counts and lengths read from a blob are checked against what it holds before anything is
    /// allocated or added: a blob that claims far more than it has reads as nothing, without
    /// trapping (the sync request fuzz target found a values blob claiming 2^43 entries).
    @Test func countsAndLengthsBeyondTheBlobReadAsNothing() {
        let huge: [UInt8] = [0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01]  // a count of 2^43 - 1
        let largest: [UInt8] = [0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x7F]  // 2^63 - 1
        #expect(SyncCoding.decodeValues(Data([0xB1] + huge + [0x01, 0x61, 0x00])) == nil)
        #expect(SyncCoding.decodeStamps(Data([0xB2] + huge + [0x01, 0x61])) == nil)
        #expect(SyncCoding.decodeStamps(Data([0xB3] + huge)) == nil)
        // A name whose length is the largest count: the bounds check must not overflow.
        #expect(SyncCoding.decodeValues(Data([0xB1, 0x01] + largest + [0x61])) == nil)
        #expect(SyncCoding.decodeValues(Data([0xB1, 0x01, 0x01, 0x61, 0x08] + largest)) == nil)
    }

    /// Stamps and base values changed in the stored blob (an acknowledgement's, a host's) read as
    /// decoding, changing and encoding the dictionary would give: seeded random records, in every
    /// form a record is stored in (compact, the older per-property stamps, JSON, cut, empty), with
    /// random changes, some of them to a stamp the record holds already; the compact stamps still
    /// write each distinct stamp once.
    @Test func patchedStampsAndValuesReadAsTheDictionaryWouldGive() throws {
        let seed = UInt64.random(in: 0...UInt64.max)
        var random = SplitMix64(seed: seed)
        let replicas = ["r-1", "", "3F2504E0-4F89-11D3-9A0C-0305E82C3301"]
        let pool = (0..<6).map { position in
            SyncStamp(
                milliseconds: Int64(position / 2), counter: Int32(position % 2), replica: replicas[position % 3])
        }
        let kinds = Array(Self.values.values)
        func randomValues(_ count: Int) -> [String: StoreValue] {
            var values: [String: StoreValue] = [:]
            for _ in 0..<count {
                let plain = [
                    StoreValue.int(Int64.random(in: -3...3, using: &random)),
                    .string(Bool.random(using: &random) ? "" : "Lisboa é bela"),
                    .double(-0.0), .null, .bool(true),
                ]
                // Mostly plain values (patched in place), now and then one of any kind (embedded
                // as JSON for some: decoded instead).
                let value =
                    Int.random(in: 0..<8, using: &random) == 0
                    ? kinds.randomElement(using: &random)! : plain.randomElement(using: &random)!
                values["p\(Int.random(in: 0..<12, using: &random))"] = value
            }
            return values
        }
        for _ in 0..<500 {
            // A record's properties share a few stamps (all one after an insert).
            let held = (0..<Int.random(in: 1...3, using: &random)).map { _ in pool.randomElement(using: &random)! }
            var stamps: [String: SyncStamp] = [:]
            for _ in 0..<Int.random(in: 0...10, using: &random) {
                stamps["p\(Int.random(in: 0..<12, using: &random))"] = held.randomElement(using: &random)!
            }
            let base = randomValues(Int.random(in: 0...10, using: &random))
            let storedStamps: Data
            let storedBase: Data
            switch Int.random(in: 0..<10, using: &random) {
            case 0:
                storedStamps = try JSONEncoder().encode(stamps)
                // JSON holds no infinity.
                storedBase = try JSONEncoder().encode(base.filter { $0.value != .double(.infinity) })
            case 1:
                storedStamps = Data()
                storedBase = Data()
            case 2:
                let whole = SyncCoding.encodeStamps(stamps)
                storedStamps = whole.prefix(Int.random(in: 1...whole.count, using: &random))
                let values = SyncCoding.encodeValues(base)
                storedBase = values.prefix(Int.random(in: 1...values.count, using: &random))
            case 3:
                // The older form: each property with its stamp.
                var bytes: [UInt8] = [0xB2, UInt8(stamps.count)]
                for (name, stamp) in stamps {
                    bytes += [UInt8(name.utf8.count)] + Array(name.utf8)
                    withUnsafeBytes(of: UInt64(bitPattern: stamp.milliseconds).littleEndian) { bytes += $0 }
                    withUnsafeBytes(of: UInt64(UInt32(bitPattern: stamp.counter)).littleEndian) { bytes += $0 }
                    bytes += [UInt8(stamp.replica.utf8.count)] + Array(stamp.replica.utf8)
                }
                storedStamps = Data(bytes)
                storedBase = SyncCoding.encodeValues(base)
            default:
                storedStamps = SyncCoding.encodeStamps(stamps)
                storedBase = SyncCoding.encodeValues(base)
            }
            let pushed = randomValues(
                Int.random(in: 0...(Int.random(in: 0..<4, using: &random) == 0 ? 12 : 3), using: &random))
            // Mostly a stamp the record does not hold yet, as a new change's.
            let stamp =
                Bool.random(using: &random)
                ? pool.randomElement(using: &random)!
                : SyncStamp(milliseconds: 9, counter: 0, replica: replicas.randomElement(using: &random)!)

            var expectedStamps = SyncCoding.decodeStamps(storedStamps) ?? [:]
            for name in pushed.keys { expectedStamps[name] = stamp }
            let restamped = SyncRecordCoding.restamp(storedStamps, names: pushed.keys, stamp: stamp)
            #expect(restamped.first == 0xB3, "seed \(seed)")
            #expect(SyncCoding.decodeStamps(restamped) == expectedStamps, "seed \(seed)")
            #expect(Int(restamped[1]) == Set(expectedStamps.values).count, "seed \(seed)")

            var expectedBase = SyncCoding.decodeValues(storedBase) ?? [:]
            expectedBase.merge(pushed) { $1 }
            let overlaid = SyncRecordCoding.overlay(storedBase, with: pushed)
            #expect(overlaid.first == 0xB1, "seed \(seed)")
            #expect(SyncCoding.decodeValues(overlaid) == expectedBase, "seed \(seed)")
        }
    }

    /// A step's stamps blobs: a change that stamps the same names with the same stamp as the one
    /// before gets its blob again; any other change gets its own, and each reads back as its names
    /// carrying its stamp.
    @Test func stampsBlobsAreReusedOnlyForTheSameNamesAndStamp() throws {
        let stamp = SyncStamp(milliseconds: 1_764_000_000_123, counter: 7, replica: "r-1")
        let later = SyncStamp(milliseconds: 1_764_000_000_124, counter: 0, replica: "r-1")
        let other = SyncStamp(milliseconds: 1_764_000_000_123, counter: 7, replica: "r-2")
        var first: [String: StoreValue] = [:]
        for name in ["name", "age", "email", "joined", "score"] { first[name] = .int(1) }
        var reordered: [String: StoreValue] = [:]
        for name in ["score", "joined", "email", "age", "name"] { reordered[name] = .null }
        let fewer: [String: StoreValue] = ["name": .int(1), "age": .int(1), "email": .int(1), "joined": .int(1)]
        let renamed: [String: StoreValue] = [
            "name": .int(1), "age": .int(1), "email": .int(1), "joined": .int(1), "notes": .int(1),
        ]
        var blobs = SyncStampsBlobs()
        let cases: [(SyncStamp, [String: StoreValue])] = [
            (stamp, first), (stamp, reordered), (later, reordered), (other, reordered), (other, fewer),
            (other, renamed), (other, [:]), (stamp, first),
        ]
        for (stamp, values) in cases {
            let blob = blobs.encode(stamp, names: values.keys)
            let expected = Dictionary(uniqueKeysWithValues: values.keys.map { ($0, stamp) })
            #expect(SyncCoding.decodeStamps(blob) == expected, "\(stamp) on \(values.keys.sorted())")
        }
    }
}
