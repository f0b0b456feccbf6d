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

    /// `count` new notes.
    private static func changes(_ count: Int) -> [SyncChange] {
        (0..<count).map { index in
            SyncChange(
                globalID: "g\(index)", entity: "Note", kind: .insert,
                values: ["owner": .string("alice"), "title": .string("n\(index)")],
                stamp: SyncStamp(milliseconds: 1, counter: 0, replica: "r1"))
        }
    }

    /// The packed blob of `count` notes, as a push of this version writes it.
    private static func blob(_ count: Int) throws -> Data {
        let encoder = JSONEncoder()
        encoder.userInfo[HTTPSyncTransport.packedCodingKey] = true
        let written = try JSONSerialization.jsonObject(
            with: encoder.encode(SyncPushRequest(replica: "r1", changes: changes(count))))
        let text = try #require((written as? [String: Any])?["packedChanges"] as? String)
        return try #require(Data(base64Encoded: text))
    }

    /// Decodes `body` as a push, expecting a refusal.
    private func refusal(_ body: Data) throws -> SyncRequestRefusal {
        try #require(
            throws: SyncRequestRefusal.self,
            performing: { try decoder.decode(body, as: SyncPushRequest.self, path: "push") })
    }

    @Test func aPackedPushOverTheLimitIsRefusedFromItsCountBeforeItsChangesAreDecoded() throws {
        // Its count says 2^62 changes and nothing follows: refused for its size, not as malformed.
        let huge = Data([0xC1, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x40])
        let error = try refusal(Self.packedPush(huge))
        #expect(error.status == 413 && error.code == "tooLarge", "\(error)")
        #expect(error.message.contains("carries \(1 << 62) changes, more than the 50 allowed"), "\(error.message)")

        // 51 real changes, cut after the first bytes: the count alone refuses it.
        let over = try Self.blob(51)
        let cut = try refusal(Self.packedPush(over.prefix(20)))
        #expect(cut.status == 413 && cut.message.contains("carries 51 changes"), "\(cut)")

        // At the limit it decodes whole, slashes escaped or not; cut short it is malformed (400).
        let full = try Self.blob(50)
        for escaping in [false, true] {
            let push = try decoder.decode(
                Self.packedPush(full, escapingSlashes: escaping), as: SyncPushRequest.self, path: "push")
            try decoder.validate(push)
            #expect(push.changes.count == 50)
        }
        #expect(try refusal(Self.packedPush(full.prefix(20))).status == 400)
    }

    @Test func aPushWithAJSONArrayOverTheLimitIsRefusedFromItsLengthBeforeItsChangesAreDecoded() throws {
        // 51 elements that are not changes: the length refuses it (413), not the first element (400).
        let junk = #"{"replica":"r1","changes":[\#(Array(repeating: "1", count: 51).joined(separator: ","))]}"#
        let error = try refusal(Data(junk.utf8))
        #expect(error.status == 413 && error.code == "tooLarge", "\(error)")
        #expect(error.message.contains("carries 51 changes, more than the 50 allowed"), "\(error.message)")
        // 50 of them are read, and the first is malformed.
        let fifty = #"{"replica":"r1","changes":[\#(Array(repeating: "1", count: 50).joined(separator: ","))]}"#
        let malformed = try refusal(Data(fifty.utf8))
        #expect(malformed.status == 400 && malformed.message.contains("'.changes[0]'"), "\(malformed)")

        // Real changes as JSON: 50 are accepted, 51 refused with their count.
        let encoder = JSONEncoder()
        for count in [50, 51] {
            let changes = Self.changes(count)
            let body = try encoder.encode(SyncPushRequest(replica: "r1", changes: changes))
            if count == 50 {
                let push = try decoder.decode(body, as: SyncPushRequest.self, path: "push")
                try decoder.validate(push)
                #expect(push.changes == changes)
            } else {
                let refused = try refusal(body)
                #expect(refused.status == 413 && refused.message.contains("carries 51 changes"), "\(refused)")
            }
        }
    }

    @Test func onlyTheTopLevelPackedChangesCount() throws {
        let huge = Data([0xC1, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x40]).base64EncodedString()
        // The key nested in another object, or inside a string: not the push's changes, accepted.
        for body in [
            #"{"replica":"r1","changes":[],"pull":{"packedChanges":"\#(huge)","replica":"r1","cursor":{"transaction":0},"limit":1}}"#,
            #"{"replica":"packedChanges","changes":[],"note":"\"packedChanges\":\"\#(huge)\""}"#,
        ] {
            let push = try decoder.decode(Data(body.utf8), as: SyncPushRequest.self, path: "push")
            #expect(push.changes.isEmpty, "\(body)")
        }
        // A blob with no count is malformed; a huge count with space around the key is refused.
        #expect(try refusal(Data(#"{"replica":"r1","packedChanges":"wQ=="}"#.utf8)).status == 400)
        #expect(try refusal(Data(#"{ "packedChanges" : "\#(huge)" , "replica":"r1"}"#.utf8)).status == 413)
    }
}
