import Foundation
import ModelStore
import ModelStoreSync
import SyncTestModels
import Testing

/// Requests the server refuses: tokens, schema, size, malformed and hostile bodies. Every refusal
/// is a 4xx answer with a JSON message, nothing is stored, and no token appears in an answer or log.
@Suite(.enabled(if: Database.isConfigured, Database.skipMessage))
struct SyncServerRefusalTests {
    private static let hello = Data(#"{"replica":"r1","schemaVersion":"1","schemaFingerprint":"x"}"#.utf8)

    @Test func requestsWithoutAValidTokenAreRefusedWith401() async throws {
        let fixture = try await Fixture()
        defer { fixture.remove() }
        let server = try ServerProcess(fixture)
        let none = try await raw(server, "hello", body: Self.hello, token: nil)
        #expect(none.status == 401)
        let garbage = try await raw(server, "hello", body: Self.hello, token: "not.a.jwt")
        #expect(garbage.status == 401)
        #expect(!garbage.body.contains("not.a.jwt"))

        let otherKey = try await SyncTokenVerifierFactory.otherKeyToken()
        let forged = try await raw(server, "hello", body: Self.hello, token: otherKey)
        #expect(forged.status == 401)
        #expect(forged.body.contains("signature"))
        let expired = try await fixture.token("alice", expiresIn: -120)
        let late = try await raw(server, "hello", body: Self.hello, token: expired)
        #expect(late.status == 401)
        #expect(late.body.contains("expired"))
        #expect(!server.log.contains(expired))
        #expect(!server.log.contains(otherKey))

        // The engine sees a permanent refusal, with the server's message.
        let client = try await fixture.client("c", subject: "alice", through: server)
        let transport = HTTPSyncTransport(baseURL: server.baseURL, token: expired)
        let engine = try SyncEngine(container: client.container, transport: transport)
        let error = await #expect(throws: SyncError.self) { try await engine.syncNow() }
        #expect(error?.code == .refused)
        #expect(error?.isTransient == false)
        #expect(error?.message.contains("expired") == true)
    }

    @Test func aClientWithAnotherSchemaIsRefusedBeforeAnythingMoves() async throws {
        let fixture = try await Fixture()
        defer { fixture.remove() }
        let server = try ServerProcess(fixture)
        let token = try await fixture.token("alice")
        let push = Data(#"{"replica":"r1","changes":[]}"#.utf8)
        let missing = try await raw(server, "push", body: push, token: token)
        #expect(missing.status == 400)
        #expect(missing.body.contains("ModelStore-Schema-Fingerprint"))
        let wrong = try await raw(
            server, "push", body: push, token: token, headers: [HTTPSyncTransport.schemaHeader: "0000"])
        #expect(wrong.status == 409)
        #expect(wrong.body.contains("schemaMismatch"))

        // A replica whose models differ: the engine stops at the hello with schemaMismatch.
        let other = Schema([OtherNote.self]).includingSyncMetadata()
        let container = try ModelContainer(
            for: other, url: "sqlite:" + fixture.directory.appendingPathComponent("other.sqlite").path)
        let engine = try SyncEngine(
            container: container, transport: HTTPSyncTransport(baseURL: server.baseURL, token: token))
        let error = await #expect(throws: SyncError.self) { try await engine.syncNow() }
        #expect(error?.code == .schemaMismatch)
    }

    @Test func malformedLargeAndHostileBodiesGet4xxAndStoreNothing() async throws {
        let fixture = try await Fixture()
        defer { fixture.remove() }
        let server = try ServerProcess(fixture, extra: ["--max-request-bytes", "4096"])
        let client = try await fixture.client("c", subject: "alice", through: server)
        try await client.engine.syncNow()  // learns nothing, but proves the server works
        let token = try await fixture.token("alice")
        let hello = try await raw(server, "hello", body: Self.hello, token: token)
        let fingerprint = try JSONDecoder().decode(SyncHelloReply.self, from: Data(hello.body.utf8)).schemaFingerprint
        let headers = [HTTPSyncTransport.schemaHeader: fingerprint]
        func push(_ json: String) async throws -> (status: Int, body: String) {
            try await raw(server, "push", body: Data(json.utf8), token: token, headers: headers)
        }
        let stamp = #"{"milliseconds":1,"counter":0,"replica":"r1"}"#

        let notJSON = try await push("{\"replica\": \"r1\", \"changes\": [")
        #expect(notJSON.status == 400)
        #expect(notJSON.body.contains("not JSON"))
        let wrongType = try await push(#"{"replica":"r1","changes":5}"#)
        #expect(wrongType.status == 400)
        #expect(wrongType.body.contains(".changes"))
        let large = try await push(
            #"{"replica":"r1","changes":[],"pad":""# + String(repeating: "x", count: 8000) + #""}"#)
        #expect(large.status == 413)
        let unknownEntity = try await push(
            #"{"replica":"r1","changes":[{"globalID":"g1","entity":"Secret","kind":"insert","values":{},"base":{},"stamp":\#(stamp)}]}"#
        )
        #expect(unknownEntity.status == 422)
        #expect(unknownEntity.body.contains("'Secret'"))
        let metadata = try await push(
            #"{"replica":"r1","changes":[{"globalID":"g1","entity":"ModelStoreSyncState","kind":"insert","values":{},"base":{},"stamp":\#(stamp)}]}"#
        )
        #expect(metadata.status == 422)
        let unknownProperty = try await push(
            #"{"replica":"r1","changes":[{"globalID":"g1","entity":"Note","kind":"insert","values":{"admin":{"bool":true}},"base":{},"stamp":\#(stamp)}]}"#
        )
        #expect(unknownProperty.status == 422)
        #expect(unknownProperty.body.contains("'admin'"))
        let wrongKind = try await push(
            #"{"replica":"r1","changes":[{"globalID":"g1","entity":"Note","kind":"insert","values":{"title":{"int":5}},"base":{},"stamp":\#(stamp)}]}"#
        )
        #expect(wrongKind.status == 422)
        #expect(wrongKind.body.contains("'title'"))
        let emptyReplica = try await push(#"{"replica":"","changes":[]}"#)
        #expect(emptyReplica.status == 400)
        let control = try await push(#"{"replica":"r\u0000","changes":[]}"#)
        #expect(control.status == 400)
        #expect(try fixture.sharedNotes().isEmpty)
        #expect(!server.log.contains(token))
    }
}

/// A model the server's schema does not have.
final class OtherNote: PersistentModel {
    @Attribute var title: String = ""
    @Attribute var colour: String = ""
    let persistentBackingData = BackingData()
    init() {}
}
