import Foundation
import ModelStoreSync
import ModelStoreSyncRequests
import SyncTestModels
import Testing

/// The request decoder alone (what the fuzz target drives): the committed fuzz inputs, valid
/// requests of every path, are accepted; hostile bodies are refused with short, clean messages.
struct SyncRequestDecoderTests {
    private let decoder = SyncRequestDecoder(
        schema: SyncTestSchema.schema,
        limits: .init(maximumChangesPerPush: 50, maximumFetchIdentifiers: 50, maximumIdentifierLength: 200))

    /// Tests/FuzzCorpus/sync-requests, beside this package.
    private static let seeds = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Tests/FuzzCorpus/sync-requests")

    @Test func theCommittedSeedsAreValidRequestsOfEveryPath() throws {
        let files = try FileManager.default.contentsOfDirectory(at: Self.seeds, includingPropertiesForKeys: nil)
        var paths = Set<Int>()
        for file in files {
            let bytes = [UInt8](try Data(contentsOf: file))
            let body = Data(bytes.dropFirst())
            let path = Int(try #require(bytes.first)) % 4
            paths.insert(path)
            switch path {
            case 0: try decoder.validate(try decoder.decode(body, as: SyncHello.self, path: "hello"))
            case 1: try decoder.validate(try decoder.decode(body, as: SyncPushRequest.self, path: "push"))
            case 2: try decoder.validate(try decoder.decode(body, as: SyncPullRequest.self, path: "pull"))
            default: try decoder.validate(try decoder.decode(body, as: SyncFetchRequest.self, path: "fetch"))
            }
        }
        #expect(paths == [0, 1, 2, 3])
    }

    @Test func hostileNamesAreQuotedShortAndWithoutControlCharacters() throws {
        let long = String(repeating: "k", count: 5_000)
        let stamp = #"{"milliseconds":1,"counter":0,"replica":"r1"}"#
        let push =
            #"{"replica":"r1","changes":[{"globalID":"g1","entity":"Note\u0007\#(long)","kind":"insert","#
            + #""values":{},"base":{},"stamp":\#(stamp)}]}"#
        let error = try #require(
            throws: SyncRequestRefusal.self,
            performing: {
                try decoder.validate(try decoder.decode(Data(push.utf8), as: SyncPushRequest.self, path: "push"))
            })
        #expect(error.status == 422)
        #expect(error.code == "unknownEntity")
        #expect(error.message.count < 300)
        #expect(!error.message.unicodeScalars.contains { $0.properties.generalCategory == .control })

        // A missing key deep in a body named with control characters and at great length.
        let nested = #"{"replica":"r1","changes":[{"\#(long)\u0001":1}]}"#
        let missing = try #require(
            throws: SyncRequestRefusal.self,
            performing: { try decoder.decode(Data(nested.utf8), as: SyncPushRequest.self, path: "push") })
        #expect(missing.status == 400)
        #expect(missing.message.contains("'.changes[0]'"))
        #expect(missing.message.count < 300)
    }

    @Test func aPushCarryingAPullWithABadReplicaIsRefused() throws {
        let push =
            #"{"replica":"r1","changes":[],"session":{"remote":"postgres-1","schemaFingerprint":"f"},"#
            + #""pull":{"replica":"r\u0000","cursor":{"transaction":7},"limit":9}}"#
        let error = try #require(
            throws: SyncRequestRefusal.self,
            performing: {
                try decoder.validate(try decoder.decode(Data(push.utf8), as: SyncPushRequest.self, path: "push"))
            })
        #expect(error.status == 400)
        #expect(error.message.contains("pull's replica"), "\(error.message)")
        let good = push.replacingOccurrences(of: #""r\u0000""#, with: #""r1""#)
        let accepted = try decoder.decode(Data(good.utf8), as: SyncPushRequest.self, path: "push")
        try decoder.validate(accepted)
        #expect(accepted.session?.remote == "postgres-1")
        #expect(accepted.pull?.cursor.transaction == 7)
    }

    /// A push whose packed blob is `blob`, its base64 with JSON's escaped slashes when asked.
    private static func packedPush(_ blob: Data, escapingSlashes: Bool = false) -> Data {
        var text = blob.base64EncodedString()
        if escapingSlashes { text = text.replacingOccurrences(of: "/", with: #"\/"#) }
        return Data(#"{"replica":"r1","packedChanges":"\#(text)"}"#.utf8)
    }

    /// The packed blob of `count` notes, as a push of this version writes it.
    private static func blob(_ count: Int) throws -> Data {
        let changes = (0..<count).map { index in
            SyncChange(
                globalID: "g\(index)", entity: "Note", kind: .insert,
                values: ["owner": .string("alice"), "title": .string("n\(index)")],
                stamp: SyncStamp(milliseconds: 1, counter: 0, replica: "r1"))
        }
        let encoder = JSONEncoder()
        encoder.userInfo[HTTPSyncTransport.packedCodingKey] = true
        let written = try JSONSerialization.jsonObject(
            with: encoder.encode(SyncPushRequest(replica: "r1", changes: changes)))
        let text = try #require((written as? [String: Any])?["packedChanges"] as? String)
        return try #require(Data(base64Encoded: text))
    }

    @Test func aPackedPushOverTheLimitIsRefusedFromItsCountBeforeItsChangesAreDecoded() throws {
        // Its count says 2^62 changes and nothing follows: refused for its size, not as malformed.
        let huge = Data([0xC1, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x40])
        #expect(SyncRequestDecoder.packedChangeCount(Self.packedPush(huge)) == 1 << 62)
        let error = try #require(
            throws: SyncRequestRefusal.self,
            performing: { try decoder.decode(Self.packedPush(huge), as: SyncPushRequest.self, path: "push") })
        #expect(error.status == 413 && error.code == "tooLarge", "\(error)")
        #expect(error.message.contains("more than the 50 allowed"), "\(error.message)")

        // 51 real changes, cut after the first bytes: the count alone refuses it.
        let over = try Self.blob(51)
        #expect(SyncRequestDecoder.packedChangeCount(Self.packedPush(over)) == 51)
        let cut = try #require(
            throws: SyncRequestRefusal.self,
            performing: { try decoder.decode(Self.packedPush(over.prefix(20)), as: SyncPushRequest.self, path: "push") }
        )
        #expect(cut.status == 413, "\(cut)")

        // At the limit it decodes whole, slashes escaped or not; cut short it is malformed (400).
        let full = try Self.blob(50)
        for escaping in [false, true] {
            let body = Self.packedPush(full, escapingSlashes: escaping)
            #expect(SyncRequestDecoder.packedChangeCount(body) == 50)
            let push = try decoder.decode(body, as: SyncPushRequest.self, path: "push")
            try decoder.validate(push)
            #expect(push.changes.count == 50)
        }
        let short = try #require(
            throws: SyncRequestRefusal.self,
            performing: { try decoder.decode(Self.packedPush(full.prefix(20)), as: SyncPushRequest.self, path: "push") }
        )
        #expect(short.status == 400, "\(short)")
    }

    @Test func onlyTheTopLevelPackedChangesKeyIsCounted() throws {
        let huge = Data([0xC1, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x40]).base64EncodedString()
        // The key nested in another object, as a value, or twice: not counted (the decoding decides).
        for body in [
            #"{"replica":"r1","changes":[],"pull":{"packedChanges":"\#(huge)","replica":"r1","cursor":{"transaction":0},"limit":1}}"#,
            #"{"replica":"packedChanges","changes":[],"note":"\"packedChanges\":\"\#(huge)\""}"#,
            #"{"replica":"r1","packedChanges":"\#(huge)","packedChanges":"\#(huge)"}"#,
            #"{"replica":"r1","packedChanges":"wQ=="}"#,
        ] {
            #expect(SyncRequestDecoder.packedChangeCount(Data(body.utf8)) == nil, "\(body)")
        }
        #expect(
            SyncRequestDecoder.packedChangeCount(Data(#"{ "packedChanges" : "\#(huge)" , "replica":"r1"}"#.utf8)) == 1
                << 62)
    }
}
