import Foundation
import ModelStore
import ModelStoreSync
import ModelStoreSyncRequests
import SyncTestModels

/// The fuzz target: one input is a path (its first byte) and a request body (the rest), read and
/// checked as the server reads and checks it. The fifth path, `push-packed`, takes the rest as the
/// blob of a packed push (``ModelStoreSync/HTTPSyncTransport/packedCodingKey``) and sends it in a
/// push's `packedChanges`, so mutations reach the blob's reader rather than its base64. What must
/// hold for every input:
///
/// - decoding and checking either accept the body or refuse it with a ``SyncRequestRefusal`` of
///   a 4xx status (nothing else escapes, nothing traps);
/// - a refusal's message and remedy stay short and hold no control characters, whatever the body
///   quoted at it;
/// - a body accepted once is accepted again after it is written back as JSON (the messages' own
///   encoding round-trips through the decoder and the checks), and so is a push written back packed.
enum SyncRequestFuzzing {
    static let paths = ["hello", "push", "pull", "fetch", "push-packed"]
    static let decoder = SyncRequestDecoder(
        schema: SyncTestSchema.schema,
        limits: .init(maximumChangesPerPush: 50, maximumFetchIdentifiers: 50, maximumIdentifierLength: 200))

    /// What happened to one input, for the mutation runner to tell new behaviour from old: the
    /// path, and the refusal's code and message with numbers left out (or `accepted`).
    static func run(_ bytes: [UInt8]) -> String {
        guard let first = bytes.first else { return "empty" }
        let path = paths[Int(first) % paths.count]
        let body = Data(bytes.dropFirst())
        do {
            switch path {
            case "hello": try check(decoder.decode(body, as: SyncHello.self, path: path), decoder.validate)
            case "push": try check(decoder.decode(body, as: SyncPushRequest.self, path: path), decoder.validate)
            case "push-packed":
                try check(decoder.decode(packedPush(body), as: SyncPushRequest.self, path: "push"), decoder.validate)
            case "pull": try check(decoder.decode(body, as: SyncPullRequest.self, path: path), decoder.validate)
            default: try check(decoder.decode(body, as: SyncFetchRequest.self, path: path), decoder.validate)
            }
            return path + " accepted"
        } catch let refusal as SyncRequestRefusal {
            verify(refusal, path: path)
            return path + " " + refusal.code + " " + refusal.message.filter { !$0.isNumber }
        } catch {
            fatalError("'\(path)': the decoder threw \(type(of: error)), not a SyncRequestRefusal")
        }
    }

    /// The body of a push from `r1` whose changes are the packed blob `blob`.
    static func packedPush(_ blob: Data) -> Data {
        Data(#"{"replica":"r1","packedChanges":"\#(blob.base64EncodedString())"}"#.utf8)
    }

    /// Checks `message`, then checks that its JSON, with arrays and packed, reads back and passes again.
    private static func check<Message: Codable>(_ message: Message, _ validate: (Message) throws -> Void) throws {
        try validate(message)
        for packed in [false, true] {
            let written: Data
            do {
                let encoder = JSONEncoder()
                if packed { encoder.userInfo[HTTPSyncTransport.packedCodingKey] = true }
                written = try encoder.encode(message)
            } catch {
                fatalError("an accepted \(Message.self) cannot be written back as JSON: \(error)")
            }
            do {
                try validate(try decoder.decode(written, as: Message.self, path: "round trip"))
            } catch {
                fatalError(
                    "an accepted \(Message.self), written back as JSON (packed: \(packed)), is refused: \(error)")
            }
        }
    }

    private static func verify(_ refusal: SyncRequestRefusal, path: String) {
        precondition((400..<500).contains(refusal.status), "'\(path)': a refusal with status \(refusal.status)")
        for text in [refusal.message, refusal.remedy ?? ""] {
            precondition(text.count <= 1_000, "'\(path)': a refusal's text of \(text.count) characters")
            precondition(
                !text.unicodeScalars.contains { $0.properties.generalCategory == .control },
                "'\(path)': a refusal's text holds a control character")
        }
    }

    /// Writes one valid request of each path, and a few near-misses, into `directory`.
    static func writeSeeds(to directory: URL) throws {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let stamp = SyncStamp(milliseconds: 1_700_000_000_000, counter: 2, replica: "r1")
        let insert = SyncChange(
            globalID: "g1", entity: "Note", kind: .insert,
            values: ["owner": .string("alice"), "title": .string("a"), "body": .string("b"), "edits": .int(1)],
            base: [:], stamp: stamp)
        let update = SyncChange(
            globalID: "g1", entity: "Note", kind: .update, values: ["edits": .int(2)], base: ["edits": .int(1)],
            stamp: stamp)
        let delete = SyncChange(globalID: "g2", entity: "Note", kind: .delete, values: [:], base: [:], stamp: stamp)
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        var seeds: [(String, Int, Data)] = [
            ("hello", 0, try encoder.encode(SyncHello(replica: "r1", schemaVersion: "1", schemaFingerprint: "f"))),
            ("push", 1, try encoder.encode(SyncPushRequest(replica: "r1", changes: [insert, update, delete]))),
            (
                "pull", 2,
                try encoder.encode(SyncPullRequest(replica: "r1", cursor: SyncCursor(transaction: 7), limit: 9))
            ),
            ("fetch", 3, try encoder.encode(SyncFetchRequest(globalIDs: ["g1", "g2"]))),
        ]
        // Values written as JSON objects, which the decoder also reads.
        let objectValues =
            #"{"replica":"r1","changes":[{"globalID":"g1","entity":"Note","kind":"insert","#
            + #""values":{"title":{"string":"a"},"edits":{"int":3}},"base":{},"#
            + #""stamp":{"milliseconds":1,"counter":0,"replica":"r1"}}]}"#
        seeds.append(("push-objects", 1, Data(objectValues.utf8)))
        let snapshot =
            #"{"replica":"r1","cursor":{"transaction":0,"snapshot":{"head":4,"entity":"Note","offset":2}},"#
            + #""limit":9}"#
        seeds.append(("pull-snapshot", 2, Data(snapshot.utf8)))
        // A push of an engine that said hello once, carrying its pull.
        let session = SyncSession(remote: "postgres-1a2b3c4d", schemaFingerprint: "f")
        let carried = SyncPushRequest(
            replica: "r1", changes: [insert], session: session,
            pull: SyncPullRequest(replica: "r1", cursor: SyncCursor(transaction: 7), limit: 9, session: session))
        seeds.append(("push-session-pull", 1, try encoder.encode(carried)))
        // The same pushes packed: the blob alone (path 4) and in a push's JSON.
        encoder.userInfo[HTTPSyncTransport.packedCodingKey] = true
        seeds.append(("push-packed-json", 1, try encoder.encode(carried)))
        let written = try JSONSerialization.jsonObject(
            with: encoder.encode(SyncPushRequest(replica: "r1", changes: [insert, update, delete])))
        guard let text = (written as? [String: Any])?["packedChanges"] as? String, let blob = Data(base64Encoded: text)
        else { throw CocoaError(.coderInvalidValue) }
        seeds.append(("push-packed", 4, blob))
        for (name, path, body) in seeds {
            try Data([UInt8(path)] + body).write(to: directory.appendingPathComponent(name))
        }
    }
}
