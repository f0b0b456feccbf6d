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
}
