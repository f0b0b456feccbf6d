import Foundation
import ModelStore
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
}
