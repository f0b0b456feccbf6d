import Foundation
import ModelStore
import ModelStoreSync
import SyncTestModels
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The packed form of change sets over HTTP, through real server processes: what crosses the
/// wire (the server's request log, raw answers, the raw change stream) for a client and a server
/// that both read it, for a client that does not ask, and for a server that does not say it reads
/// it; a client falls back to arrays when its server stops reading the form; malformed blobs get
/// 400 and store nothing.
@Suite(.enabled(if: Database.isConfigured, Database.skipMessage))
struct SyncPackedFormTests {
    private static let hello = Data(#"{"replica":"probe","schemaVersion":"1","schemaFingerprint":"x"}"#.utf8)
    private static let packedHeader = [HTTPSyncTransport.formsHeader: HTTPSyncTransport.packedForm]

    @Test func aClientAndServerOfThisVersionSendAndReceivePackedChanges() async throws {
        let fixture = try await Fixture()
        defer { fixture.remove() }
        let server = try ServerProcess(fixture)
        let writer = try await fixture.client("writer", subject: "alice", through: server)
        let reader = try await fixture.client("reader", subject: "alice", through: server)
        try writer.add("a", "b", "c", body: "packed")
        _ = try await writer.engine.syncNow()
        _ = try await reader.engine.syncNow()
        try writer.edit("b") { $0.edits = 7 }
        _ = try await writer.engine.syncNow()
        _ = try await reader.engine.syncNow()

        let expected = ["alice/a: packed (0)", "alice/b: packed (7)", "alice/c: packed (0)"]
        #expect(try reader.notes() == expected)
        #expect(try fixture.sharedNotes() == expected)
        // Every push that stored something arrived packed, and every pull was answered packed.
        let pushes = Self.requests(in: server.log, path: "push", status: 200)
        let pulls = Self.requests(in: server.log, path: "pull", status: 200)
        #expect(pushes.count >= 2, "\(server.log)")
        #expect(!pulls.isEmpty, "\(server.log)")
        for line in pushes { #expect(line.contains("packed=body"), "\(line)") }
        for line in pulls { #expect(line.contains("packed=reply"), "\(line)") }
        // The pull the push carries came back packed too.
        #expect(pushes.contains { $0.contains("packed=body+reply") }, "\(pushes)")
    }

    @Test func aClientThatDoesNotAskGetsJSONArrays() async throws {
        let fixture = try await Fixture()
        defer { fixture.remove() }
        let server = try ServerProcess(fixture)
        let token = try await fixture.token("alice")
        let writer = try await plainClient("writer", fixture, server)
        let reader = try await plainClient("reader", fixture, server)
        try writer.add("a", "b", body: "plain")
        _ = try await writer.engine.syncNow()
        _ = try await reader.engine.syncNow()
        #expect(try reader.notes() == ["alice/a: plain (0)", "alice/b: plain (0)"])
        #expect(!Self.requests(in: server.log, path: "push", status: 200).isEmpty)
        #expect(!server.log.contains("packed="), "\(server.log)")

        // The same pull, raw: arrays without the header, packed with it; the server says it
        // reads the form either way.
        let hello = try await exchange(server, "hello", body: Self.hello, token: token)
        #expect(hello.headers[HTTPSyncTransport.formsHeader] == HTTPSyncTransport.packedForm)
        let fingerprint = try JSONDecoder().decode(SyncHelloReply.self, from: hello.body).schemaFingerprint
        let pull = try JSONEncoder().encode(SyncPullRequest(replica: "probe", cursor: .start, limit: 100))
        let schema = [HTTPSyncTransport.schemaHeader: fingerprint]
        let plain = try await exchange(server, "pull", body: pull, token: token, headers: schema)
        #expect(plain.status == 200)
        #expect(plain.text.contains(#""models":["#) && !plain.text.contains("packedModels"), "\(plain.text)")
        let packed = try await exchange(
            server, "pull", body: pull, token: token, headers: schema.merging(Self.packedHeader) { $1 })
        #expect(packed.status == 200)
        #expect(packed.text.contains(#""packedModels":""#) && !packed.text.contains(#""models""#), "\(packed.text)")
        #expect(
            try JSONDecoder().decode(SyncPullReply.self, from: packed.body).models.count
                == JSONDecoder().decode(SyncPullReply.self, from: plain.body).models.count)
    }

    @Test func aServerThatDoesNotSayItReadsTheFormGetsArraysAndSyncs() async throws {
        let fixture = try await Fixture()
        defer { fixture.remove() }
        let server = try ServerProcess(fixture, extra: ["--packed-changes", "off"])
        let writer = try await fixture.client("writer", subject: "alice", through: server)
        let reader = try await fixture.client("reader", subject: "alice", through: server)
        try writer.add("a", "b", body: "old server")
        _ = try await writer.engine.syncNow()
        _ = try await reader.engine.syncNow()
        try reader.edit("a") { $0.edits = 3 }
        _ = try await reader.engine.syncNow()
        _ = try await writer.engine.syncNow()
        let expected = ["alice/a: old server (3)", "alice/b: old server (0)"]
        #expect(try writer.notes() == expected)
        #expect(try reader.notes() == expected)
        #expect(try fixture.sharedNotes() == expected)
        // No request went packed either way, and no round needed a second try.
        #expect(Self.requests(in: server.log, path: "push", status: 200).count >= 2)
        #expect(!server.log.contains("packed="), "\(server.log)")
        #expect(Self.requests(in: server.log, path: "push", status: 400).isEmpty, "\(server.log)")

        // Raw: no header on its answers, arrays even to a client that asks.
        let token = try await fixture.token("alice")
        let hello = try await exchange(server, "hello", body: Self.hello, token: token, headers: Self.packedHeader)
        #expect(hello.headers[HTTPSyncTransport.formsHeader] == nil)
        let fingerprint = try JSONDecoder().decode(SyncHelloReply.self, from: hello.body).schemaFingerprint
        let pull = try JSONEncoder().encode(SyncPullRequest(replica: "probe", cursor: .start, limit: 100))
        let answer = try await exchange(
            server, "pull", body: pull, token: token,
            headers: Self.packedHeader.merging([HTTPSyncTransport.schemaHeader: fingerprint]) { $1 })
        #expect(answer.text.contains(#""models":["#) && !answer.text.contains("packedModels"))
    }

    @Test func aClientFallsBackToArraysWhenItsServerStopsReadingTheForm() async throws {
        let fixture = try await Fixture()
        defer { fixture.remove() }
        let first = try ServerProcess(fixture)
        let transport = HTTPSyncTransport(baseURL: first.baseURL, token: try await fixture.token("alice"), timeout: 10)
        let session = try await transport.session(replica: "probe")
        func push(_ title: String) async throws -> SyncPushReply {
            try await transport.push(SyncPushRequest(replica: "probe", changes: [Self.insert(title)], session: session))
        }
        #expect(try await push("before").applied)
        #expect(Self.requests(in: first.log, path: "push", status: 200).map { $0.contains("packed=body") } == [true])
        // The same address now answers from a server that does not read the form (an older
        // process after a rollback, say), while the transport last heard that the form is read.
        first.stop()
        let second = try ServerProcess(fixture, extra: ["--port", "\(first.port)", "--packed-changes", "off"])
        #expect(try await push("after").applied)
        #expect(try await push("later").applied)
        #expect(try fixture.sharedNotes() == ["alice/after:  (0)", "alice/before:  (0)", "alice/later:  (0)"])
        // One packed push was refused (400, nothing stored) and sent again as arrays; then arrays only.
        let refused = Self.requests(in: second.log, path: "push", status: 400)
        #expect(refused.count == 1 && refused.allSatisfy { $0.contains("packed=body") }, "\(second.log)")
        let stored = Self.requests(in: second.log, path: "push", status: 200)
        #expect(stored.count == 2 && !stored.contains { $0.contains("packed=") }, "\(second.log)")
        // An engine keeps syncing through it.
        let client = try await fixture.client("client", subject: "alice", through: second)
        try client.add("engine")
        _ = try await client.engine.syncNow()
        #expect(try client.notes().count == 4)
        #expect(try fixture.sharedNotes().count == 4)
    }

    @Test func malformedPackedPushesGet400AndStoreNothing() async throws {
        let fixture = try await Fixture()
        defer { fixture.remove() }
        let server = try ServerProcess(fixture)
        let token = try await fixture.token("alice")
        let hello = try await exchange(server, "hello", body: Self.hello, token: token)
        let fingerprint = try JSONDecoder().decode(SyncHelloReply.self, from: hello.body).schemaFingerprint
        let headers = [HTTPSyncTransport.schemaHeader: fingerprint]
        func push(_ body: Data) async throws -> (status: Int, text: String) {
            let answer = try await exchange(server, "push", body: body, token: token, headers: headers)
            return (answer.status, answer.text)
        }
        let changes = (0..<3).map { Self.insert("note \($0)") }
        let blob = try Self.packedBlob(changes)

        for (what, body) in [
            ("not base64", Self.body(packed: "@@not base64@@")),
            (
                "not a blob",
                Self.body(packed: Data([0xC1, 0x03, 0xFF, 0xFF, 0xFF, 0xFF, 0x0F, 0x01]).base64EncodedString())
            ),
            ("cut short", Self.body(packed: blob.dropLast(3).base64EncodedString())),
            ("a byte too many", Self.body(packed: (blob + [0]).base64EncodedString())),
            ("models, not changes", Self.body(packed: Data([0xC2] + blob.dropFirst()).base64EncodedString())),
            ("empty", Self.body(packed: "")),
        ] {
            let answer = try await push(body)
            #expect(answer.status == 400, "\(what): \(answer)")
            #expect(answer.text.contains("packedChanges") && answer.text.contains("badRequest"), "\(what): \(answer)")
        }
        // The limits hold for packed pushes as for arrays: too many changes, an unknown entity.
        let many = try await push(Self.body(packed: Self.packedBlob((0..<5_001).map { Self.insert("n\($0)") })))
        #expect(many.status == 413, "\(many)")
        // A blob that says it holds more than allowed is refused from that count, before its changes
        // are decoded: one claiming 2^62 with nothing after, and the 5,001 cut to their first bytes.
        let claims = try await push(
            Self.body(packed: Data([0xC1, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x40]).base64EncodedString()))
        #expect(claims.status == 413 && claims.text.contains("tooLarge"), "\(claims)")
        let cut = try await push(
            Self.body(
                packed: Self.packedBlob((0..<5_001).map { Self.insert("n\($0)") }).prefix(40).base64EncodedString()))
        #expect(cut.status == 413 && cut.text.contains("tooLarge"), "\(cut)")
        var stranger = Self.insert("stranger")
        stranger.entity = "Stranger"
        let unknown = try await push(Self.body(packed: Self.packedBlob([stranger])))
        #expect(unknown.status == 422, "\(unknown)")
        #expect(try fixture.sharedNotes() == [])

        // The well-formed blob is stored: what failed above was the blob.
        let stored = try await push(Self.body(packed: blob))
        #expect(stored.status == 200, "\(stored)")
        #expect(try fixture.sharedNotes() == ["alice/note 0:  (0)", "alice/note 1:  (0)", "alice/note 2:  (0)"])
    }

    @Test func carriedPagesArePackedForAListenerThatAsks() async throws {
        let fixture = try await Fixture()
        defer { fixture.remove() }
        let server = try ServerProcess(fixture)
        let token = try await fixture.token("alice")
        let writer = try await fixture.client("writer", subject: "alice", through: server)
        // Two listening replicas whose place the server knows (each pulled to the end), one asking
        // for the packed form, one not.
        for (replica, packed) in [("packed-listener", true), ("plain-listener", false)] {
            let transport = HTTPSyncTransport(baseURL: server.baseURL, token: token, timeout: 10, packedChanges: packed)
            try await transport.pullToEnd(replica: replica, session: try await transport.session(replica: replica))
        }
        // The raw change streams, as curl reads them off the socket while a note is saved.
        let streams = try [("packed-listener", true), ("plain-listener", false)].map { replica, packed in
            try StreamCapture(
                server.baseURL.absoluteString + "/changes?carry=1&replica=\(replica)&limit=1000",
                headers: ["Authorization: Bearer \(token)"]
                    + (packed ? ["\(HTTPSyncTransport.formsHeader): \(HTTPSyncTransport.packedForm)"] : []),
                in: fixture.directory)
        }
        defer { for stream in streams { stream.stop() } }
        #expect(try await eventually(30) { streams.allSatisfy(\.isOpen) })
        try writer.add("carried", body: "over the stream")
        _ = try await writer.engine.syncNow()
        // Pages carried before the note (the listeners' own hellos) carry no models; the one that
        // carries the note may take a while on a busy machine.
        func titles(_ text: String) -> [StoreValue] {
            text.split(separator: "\n").filter { $0.hasPrefix("data: {") }.compactMap {
                try? JSONDecoder().decode(SyncAnnouncement.self, from: Data($0.dropFirst(6).utf8)).changes
            }.flatMap(\.page.models).compactMap { $0.values?["title"] }
        }
        #expect(try await eventually(30) { streams.allSatisfy { !titles($0.text).isEmpty } })
        let outputs = streams.map { $0.stop() }
        #expect(outputs[0].contains(#""packedModels":""#) && !outputs[0].contains(#""models""#), "\(outputs[0])")
        #expect(outputs[1].contains(#""models":["#) && !outputs[1].contains("packedModels"), "\(outputs[1])")
        for output in outputs {
            #expect(titles(output) == [.string("carried")], "\(output)")
        }
    }

    // MARK: Helpers

    /// A client through `server` whose transport neither asks for nor sends the packed form: on
    /// the wire, a client from before the form.
    private func plainClient(_ name: String, _ fixture: Fixture, _ server: ServerProcess) async throws -> Client {
        let container = try ModelContainer(
            for: SyncTestSchema.schema, url: "sqlite:" + fixture.directory.appendingPathComponent(name).path)
        let transport = HTTPSyncTransport(
            baseURL: server.baseURL, token: try await fixture.token("alice"), timeout: 10, packedChanges: false)
        return Client(
            container: container, engine: try SyncEngine(container: container, transport: transport), owner: "alice")
    }

    /// The server's log lines for requests to `path` answered `status`.
    private static func requests(in log: String, path: String, status: Int) -> [String] {
        log.split(separator: "\n").map(String.init).filter {
            $0.contains("sync request") && $0.contains("path=\(path) ") && $0.contains("status=\(status) ")
        }
    }

    /// An insert of a note of alice's titled `title`.
    private static func insert(_ title: String) -> SyncChange {
        SyncChange(
            globalID: UUID().uuidString, entity: "Note", kind: .insert,
            values: ["owner": .string("alice"), "title": .string(title), "body": .string(""), "edits": .int(0)],
            stamp: SyncStamp(milliseconds: 1_700_000_000_000, counter: 0, replica: "probe"))
    }

    /// The packed blob of `changes`, as a push of this version writes it.
    private static func packedBlob(_ changes: [SyncChange]) throws -> Data {
        let encoder = JSONEncoder()
        encoder.userInfo[HTTPSyncTransport.packedCodingKey] = true
        let written = try JSONSerialization.jsonObject(
            with: encoder.encode(SyncPushRequest(replica: "probe", changes: changes)))
        let text = try #require((written as? [String: Any])?["packedChanges"] as? String)
        return try #require(Data(base64Encoded: text))
    }

    /// A push of `probe` whose `packedChanges` is `text`.
    private static func body(packed text: String) -> Data {
        Data(#"{"replica":"probe","packedChanges":"\#(text)"}"#.utf8)
    }

    /// A push of `probe` whose `packedChanges` is `blob`.
    private static func body(packed blob: Data) -> Data { body(packed: blob.base64EncodedString()) }

    /// A raw request, with the answer's status, headers and body.
    private func exchange(
        _ server: ServerProcess, _ path: String, body: Data, token: String, headers: [String: String] = [:]
    ) async throws -> (status: Int, headers: [String: String], body: Data, text: String) {
        var request = URLRequest(url: server.baseURL.appendingPathComponent(path))
        request.httpMethod = "POST"
        request.httpBody = body
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization")
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        let (data, response) = try await URLSession.shared.data(for: request)
        let http = try #require(response as? HTTPURLResponse)
        var fields: [String: String] = [:]
        for (name, value) in http.allHeaderFields {
            guard let name = name as? String, let value = value as? String else { continue }
            // Header names are case-insensitive; keep the transport's spelling for the one tested.
            fields[
                name.lowercased() == HTTPSyncTransport.formsHeader.lowercased() ? HTTPSyncTransport.formsHeader : name] =
                value
        }
        return (http.statusCode, fields, data, String(decoding: data, as: UTF8.self))
    }
}
