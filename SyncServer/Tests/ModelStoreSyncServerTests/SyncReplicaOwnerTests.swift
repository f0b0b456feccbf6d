import Foundation
import ModelStore
import ModelStoreSync
import SyncTestModels
import Testing

/// A replica syncs only with tokens of the subject that first synced it: another user's token is
/// refused (403 `replicaNotOwned`) on hello, push and pull, through every server process, with a
/// message that names the replica and quotes no token.
@Suite(.enabled(if: Database.isConfigured, Database.skipMessage))
struct SyncReplicaOwnerTests {
    @Test func anotherUsersTokenCannotSyncAsAReplicaItDoesNotOwn() async throws {
        let fixture = try await Fixture()
        defer { fixture.remove() }
        let first = try ServerProcess(fixture)
        let second = try ServerProcess(fixture)
        let alice = try await fixture.client("alice", subject: "alice", through: first)
        try alice.add("alice's note")
        try await alice.engine.syncNow()

        // Bob's token on Alice's store (the same replica name): the hello is refused, so no round starts.
        let bobToken = try await fixture.token("bob")
        let stolen = try SyncEngine(
            container: alice.container, transport: HTTPSyncTransport(baseURL: second.baseURL, token: bobToken))
        try alice.add("written under bob's token")
        let refusal = await #expect(throws: SyncError.self) { try await stolen.syncNow() }
        #expect(refusal?.code == .refused)
        #expect(refusal?.isTransient == false)
        #expect(refusal?.message.contains("another user's token first synced") == true)
        #expect(try fixture.sharedNotes() == ["alice/alice's note:  (0)"])

        // Raw requests with Bob's token naming a replica Alice's token named first: refused on each
        // path, on both processes.
        let aliceToken = try await fixture.token("alice")
        let replica = "alice-laptop"
        #expect(try await raw(first, "hello", body: Self.hello(replica), token: aliceToken).status == 200)
        let fingerprint = try await Self.fingerprint(first, token: aliceToken)
        let headers = [HTTPSyncTransport.schemaHeader: fingerprint]
        for server in [first, second] {
            let answers = [
                try await raw(server, "hello", body: Self.hello(replica), token: bobToken),
                try await raw(
                    server, "push", body: Data(#"{"replica":"\#(replica)","changes":[]}"#.utf8), token: bobToken,
                    headers: headers),
                try await raw(
                    server, "pull",
                    body: Data(#"{"replica":"\#(replica)","cursor":{"transaction":0},"limit":10}"#.utf8),
                    token: bobToken, headers: headers),
            ]
            for answer in answers {
                #expect(answer.status == 403)
                #expect(answer.body.contains(#""code":"replicaNotOwned""#))
                #expect(answer.body.contains(replica))
                #expect(answer.body.contains("remedy"))
                #expect(!answer.body.contains(bobToken))
            }
            #expect(!server.log.contains(bobToken))
        }

        // Alice's own tokens still sync the replica, through either process; Bob syncs a store of his own.
        try await alice.engine.syncNow()
        let bob = try await fixture.client("bob", subject: "bob", through: second)
        try bob.add("bob's note")
        try await bob.engine.syncNow()
        #expect(
            try fixture.sharedNotes() == [
                "alice/alice's note:  (0)", "alice/written under bob's token:  (0)", "bob/bob's note:  (0)",
            ])
    }

    private static func hello(_ replica: String) -> Data {
        Data(#"{"replica":"\#(replica)","schemaVersion":"1","schemaFingerprint":"x"}"#.utf8)
    }

    private static func fingerprint(_ server: ServerProcess, token: String) async throws -> String {
        let answer = try await raw(server, "hello", body: hello("fingerprint-probe"), token: token)
        return try JSONDecoder().decode(SyncHelloReply.self, from: Data(answer.body.utf8)).schemaFingerprint
    }

}
