import Foundation
import ModelStore
import ModelStoreTestSupport
import Testing

@testable import ModelStoreSync

/// The packed forms of a push's changes and of a pulled page's models: what goes in comes out equal,
/// a message written the older way (JSON arrays) still reads, a peer of the older version refuses a
/// packed push instead of taking it for an empty one, and a cut or padded blob reads as nothing.
@Suite struct SyncPackedMessageTests {
    static let stamp = SyncStamp(milliseconds: 1_764_000_000_123, counter: 3, replica: "3F2504E0-4F89-11D3-9A0C")

    /// Changes of every kind, with repeated and changing entities and replicas, the empty text among them.
    static let changes: [SyncChange] = [
        SyncChange(globalID: "A", entity: "Trip", kind: .insert, values: SyncRecordCodingTests.values, stamp: stamp),
        SyncChange(
            globalID: "B", entity: "Trip", kind: .update, values: ["name": .string("Porto")],
            base: ["name": .string("Lisboa")], stamp: stamp),
        SyncChange(
            globalID: "C", entity: "Stop", kind: .delete, stamp: SyncStamp(milliseconds: -1, counter: .max, replica: "")
        ),
        SyncChange(globalID: "", entity: "", kind: .insert, values: [:], stamp: .zero),
        SyncChange(globalID: "D", entity: "", kind: .update, values: ["n": .null], base: ["n": .int(1)], stamp: stamp),
        SyncChange(globalID: "E", entity: "Stop", kind: .delete, stamp: stamp),
    ]

    static let models: [SyncModelState] = [
        SyncModelState(
            globalID: "A", entity: "Trip", values: SyncRecordCodingTests.values,
            stamps: ["name": stamp, "budget": SyncStamp(milliseconds: 2, counter: 0, replica: "other")]),
        SyncModelState(globalID: "B", entity: "Trip", values: nil, stamps: [:]),
        SyncModelState(globalID: "C", entity: "", values: [:], stamps: ["x": .zero]),
        SyncModelState(globalID: "D", entity: "Stop", values: ["n": .int(1)], stamps: [:]),
    ]

    static func request(_ changes: [SyncChange]) -> SyncPushRequest {
        SyncPushRequest(
            replica: "r", changes: changes, session: SyncSession(remote: "s", schemaFingerprint: "f"),
            pull: SyncPullRequest(replica: "r", cursor: SyncCursor(transaction: 7), limit: 10))
    }

    static func encoded<Message: Encodable>(_ message: Message, packed: Bool) throws -> Data {
        let encoder = JSONEncoder()
        if packed { encoder.userInfo[SyncMessageCoding.packedChanges] = true }
        return try encoder.encode(message)
    }

    static func keys(_ data: Data) throws -> Set<String> {
        Set((try JSONSerialization.jsonObject(with: data) as? [String: Any])?.keys.map { $0 } ?? [])
    }

    @Test func aPushComesBackEqualPackedOrNot() throws {
        let request = Self.request(Self.changes)
        for packed in [true, false] {
            let data = try Self.encoded(request, packed: packed)
            #expect(
                try Self.keys(data)
                    == ["replica", packed ? "packedChanges" : "changes", "session", "pull"])
            let decoded = try JSONDecoder().decode(SyncPushRequest.self, from: data)
            #expect(decoded.changes == request.changes)
            #expect(decoded.replica == "r" && decoded.session == request.session)
            #expect(decoded.pull?.cursor == request.pull?.cursor && decoded.pull?.limit == 10)
        }
    }

    @Test func aPulledPageComesBackEqualPackedOrNot() throws {
        let reply = SyncPullReply(models: Self.models, cursor: SyncCursor(transaction: 9), hasMore: true)
        for packed in [true, false] {
            let data = try Self.encoded(reply, packed: packed)
            #expect(try Self.keys(data) == [packed ? "packedModels" : "models", "cursor", "hasMore"])
            let decoded = try JSONDecoder().decode(SyncPullReply.self, from: data)
            #expect(decoded.models == Self.models)
            #expect(decoded.cursor == reply.cursor && decoded.hasMore)
        }
        // Riding on a push's reply, the page is packed with it.
        let pushReply = SyncPushReply(applied: true, stale: [], merged: [:], states: [], pulled: reply)
        let data = try Self.encoded(pushReply, packed: true)
        #expect(String(decoding: data, as: UTF8.self).contains("packedModels"))
        #expect(try JSONDecoder().decode(SyncPushReply.self, from: data).pulled?.models == Self.models)
    }

    /// The shape the messages had before the packed forms (the synthesized coding of the same
    /// properties), standing for a peer of that version.
    struct OlderPushRequest: Codable {
        var replica: String
        var changes: [SyncChange]
        var session: SyncSession?
        var pull: SyncPullRequest?
    }

    struct OlderPullReply: Codable {
        var models: [SyncModelState]
        var cursor: SyncCursor
        var hasMore: Bool
    }

    @Test func olderPeersReadTheUnpackedFormAndRefuseThePackedOne() throws {
        let request = Self.request(Self.changes)
        let older = try JSONDecoder().decode(OlderPushRequest.self, from: try Self.encoded(request, packed: false))
        #expect(older.changes == request.changes)
        // What an older peer sends reads here.
        let sent = try JSONEncoder().encode(older)
        #expect(try JSONDecoder().decode(SyncPushRequest.self, from: sent).changes == request.changes)
        // A packed push is refused whole by an older host, never read as a push of nothing.
        #expect(throws: DecodingError.self) {
            try JSONDecoder().decode(OlderPushRequest.self, from: try Self.encoded(request, packed: true))
        }
        let reply = SyncPullReply(models: Self.models, cursor: SyncCursor(transaction: 9), hasMore: false)
        #expect(
            try JSONDecoder().decode(OlderPullReply.self, from: try Self.encoded(reply, packed: false)).models
                == Self.models)
        let olderReply = OlderPullReply(models: Self.models, cursor: SyncCursor(transaction: 9), hasMore: false)
        #expect(
            try JSONDecoder().decode(SyncPullReply.self, from: try JSONEncoder().encode(olderReply)).models
                == Self.models)
        #expect(throws: DecodingError.self) {
            try JSONDecoder().decode(OlderPullReply.self, from: try Self.encoded(reply, packed: true))
        }
    }

    @Test func aCutOrPaddedBlobReadsAsNothing() throws {
        let changes = SyncRecordCoding.encode(changes: Self.changes)
        #expect(changes.first == 0xC1)
        #expect(SyncRecordCoding.decodeChanges(changes) == Self.changes)
        for length in 0..<changes.count {
            #expect(SyncRecordCoding.decodeChanges(changes.prefix(length)) == nil, "cut at \(length)")
        }
        #expect(SyncRecordCoding.decodeChanges(changes + [0]) == nil)
        let models = SyncRecordCoding.encode(models: Self.models)
        #expect(models.first == 0xC2)
        #expect(SyncRecordCoding.decodeModels(models) == Self.models)
        for length in 0..<models.count {
            #expect(SyncRecordCoding.decodeModels(models.prefix(length)) == nil, "cut at \(length)")
        }
        #expect(SyncRecordCoding.decodeModels(models + [0]) == nil)
        // A repeat with nothing before it, and counts far beyond the bytes, read as nothing.
        #expect(SyncRecordCoding.decodeChanges(Data([0xC1, 1, 1, 0x41, 0, 1])) == nil)
        #expect(SyncRecordCoding.decodeChanges(Data([0xC1, 0xFF, 0xFF, 0xFF, 0xFF, 0x0F])) == nil)
        #expect(SyncRecordCoding.decodeModels(Data([0xC2, 0xFF, 0xFF, 0xFF, 0xFF, 0x0F])) == nil)
        // In a message, a broken blob is a decoding error naming the key.
        var object =
            try JSONSerialization.jsonObject(with: try Self.encoded(Self.request(Self.changes), packed: true))
            as? [String: Any] ?? [:]
        object["packedChanges"] = changes.prefix(changes.count - 1).base64EncodedString()
        let broken = try JSONSerialization.data(withJSONObject: object)
        #expect {
            try JSONDecoder().decode(SyncPushRequest.self, from: broken)
        } throws: { error in
            guard case DecodingError.dataCorrupted(let context) = error else { return false }
            return context.codingPath.last?.stringValue == "packedChanges"
        }
    }

    /// A decoder limited to `limit` changes per push.
    static func limited(_ limit: Int) -> JSONDecoder {
        let decoder = JSONDecoder()
        decoder.userInfo[SyncPushRequest.maximumChangesKey] = limit
        return decoder
    }

    @Test func aPushOverTheDecodersLimitStopsAtItsCountPackedOrNot() throws {
        let request = Self.request(Self.changes)
        for packed in [true, false] {
            let data = try Self.encoded(request, packed: packed)
            // At the limit, and with no limit, it reads whole.
            #expect(
                try Self.limited(Self.changes.count).decode(SyncPushRequest.self, from: data).changes == Self.changes)
            #expect {
                try Self.limited(Self.changes.count - 1).decode(SyncPushRequest.self, from: data)
            } throws: { error in
                error as? SyncPushRequest.TooManyChanges
                    == SyncPushRequest.TooManyChanges(count: Self.changes.count, limit: Self.changes.count - 1)
            }
        }
        // The count alone decides, before any change is read: a blob that claims 2^62 changes and
        // holds none, and an array of 3 things that are not changes.
        let claim = Data([0xC1, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x40])
        let bodies = [
            #"{"replica":"r","packedChanges":"\#(claim.base64EncodedString())"}"#: 1 << 62,
            #"{"replica":"r","changes":[1,"x",null]}"#: 3,
        ]
        for (body, count) in bodies {
            #expect {
                try Self.limited(2).decode(SyncPushRequest.self, from: Data(body.utf8))
            } throws: { error in
                error as? SyncPushRequest.TooManyChanges == SyncPushRequest.TooManyChanges(count: count, limit: 2)
            }
            // Without the limit they are malformed.
            #expect(throws: DecodingError.self) {
                try JSONDecoder().decode(SyncPushRequest.self, from: Data(body.utf8))
            }
        }
        #expect(
            try SyncRecordCoding.decodeChanges(claim, limit: .max) == nil
                && SyncRecordCoding.decodeChanges(SyncRecordCoding.encode(changes: Self.changes), limit: 6)
                    == Self.changes
        )
    }

    /// Seeded random changes and models against the plain values they were made from.
    @Test(arguments: [UInt64(1), 42, 2026])
    func randomMessagesComeBackEqual(seed: UInt64) throws {
        var random = SplitMix64(seed: seed)
        let names = ["name", "age", "email", "", "é"]
        let entities = ["Trip", "Stop", ""]
        let replicas = ["r-1", "3F2504E0-4F89-11D3-9A0C-0305E82C3301", ""]
        func value() -> StoreValue {
            switch random.below(6) {
            case 0: .null
            case 1: .int(Int64(bitPattern: random.next()))
            // Any double but NaN, which equals nothing, itself included.
            case 2: .double(Double(Int64(bitPattern: random.next())) / Double(random.below(1000) + 1))
            case 3: .string(String(repeating: random.pick(["a", "é", "😀", ""]), count: random.below(40)))
            case 4: .reference(SyncModelState.reference(to: "\(random.next())", entity: random.pick(entities)))
            default: .bool(random.chance(50))
            }
        }
        func values() -> [String: StoreValue] {
            Dictionary((0..<random.below(5)).map { _ in (random.pick(names), value()) }, uniquingKeysWith: { $1 })
        }
        func stamp() -> SyncStamp {
            SyncStamp(
                milliseconds: Int64(bitPattern: random.next()), counter: Int32(truncatingIfNeeded: random.next()),
                replica: random.pick(replicas))
        }
        for _ in 0..<50 {
            let changes = (0..<random.below(30)).map { _ in
                SyncChange(
                    globalID: "\(random.next())", entity: random.pick(entities),
                    kind: random.pick([.insert, .update, .delete]), values: values(), base: values(), stamp: stamp())
            }
            #expect(
                SyncRecordCoding.decodeChanges(SyncRecordCoding.encode(changes: changes)) == changes, "seed \(seed)")
            let models = (0..<random.below(30)).map { _ in
                SyncModelState(
                    globalID: "\(random.next())", entity: random.pick(entities),
                    values: random.chance(20) ? nil : values(),
                    stamps: Dictionary(
                        names.filter { _ in random.chance(50) }.map { ($0, stamp()) }, uniquingKeysWith: { $1 }))
            }
            #expect(SyncRecordCoding.decodeModels(SyncRecordCoding.encode(models: models)) == models, "seed \(seed)")
        }
    }

    @Test func oneStampForEveryPropertyIsWrittenAsTheDictionaryWouldBe() {
        let names = ["name", "email", "age"]
        let written = SyncCoding.encodeStamps(Self.stamp, names: names)
        let dictionary = Dictionary(uniqueKeysWithValues: names.map { ($0, Self.stamp) })
        #expect(SyncCoding.decodeStamps(written) == dictionary)
        #expect(written.count == SyncCoding.encodeStamps(dictionary).count)
        #expect(SyncCoding.encodeStamps(Self.stamp, names: [String]()) == SyncCoding.encodeStamps([:]))
    }

    @Test func aRecordMadeInItsSlotsEqualsOneMadeByName() throws {
        let schema = Schema([Journey.self]).includingSyncMetadata()
        let entity = try #require(schema.entity(named: SyncMetadata.recordEntityName(for: "Journey")))
        let model = PersistentIdentifier.identifier(for: "s", entityName: "Journey", primaryKey: Int64(4))
        let byName = try SyncRecord.new(
            entity: entity, globalID: "G", model: model, base: ["name": .string("x")], stamps: ["name": Self.stamp],
            pending: true, key: "k")
        let bySlot = SyncRecord.new(
            slots: try SyncRecordSlots(entity), globalID: "G", model: model,
            base: SyncCoding.encodeValues(["name": .string("x")]),
            stamps: SyncCoding.encodeStamps(["name": Self.stamp]),
            pending: true, key: "k")
        #expect(bySlot.snapshot.values == byName.snapshot.values)
        #expect(bySlot.globalID == "G" && bySlot.model == model && bySlot.pending && bySlot.key == "k")
        #expect(bySlot.base == ["name": .string("x")] && bySlot.stamps == ["name": Self.stamp])
    }
}
