import Foundation
import ModelStore
import ModelStoreSync
import SyncTestModels
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Group commit (`SyncServerConfiguration.groupCommit`, `--group-commit`) through two real server
/// processes over PostgreSQL: concurrent pushes are committed in fewer transactions than saves (the
/// servers' push log lines count them), each acknowledged change is stored once, a refused push
/// changes nothing for the pushes beside it, and a seeded run of random pushes from many replicas
/// ends with the store holding exactly what each replica was acknowledged.
@Suite(.enabled(if: Database.isConfigured, Database.skipMessage))
struct SyncServerGroupCommitTests {
    /// A replica pushing through a server with raw requests, as an engine would.
    private struct Replica {
        let name: String
        let subject: String
        let transport: HTTPSyncTransport
        let session: SyncSession

        init(_ name: String, subject: String, through server: ServerProcess, fixture: Fixture) async throws {
            self.name = name
            self.subject = subject
            transport = HTTPSyncTransport(baseURL: server.baseURL, token: try await fixture.token(subject), timeout: 30)
            session = try await transport.session(replica: name)
        }

        func push(_ changes: [SyncChange]) async throws -> SyncPushReply {
            try await transport.push(SyncPushRequest(replica: name, changes: changes, session: session))
        }
    }

    /// A note as a change: new (`base` nil), or changed from `base`'s body.
    private static func change(
        _ global: String, owner: String, title: String, body: String, edits: Int, base: String? = nil,
        delete: Bool = false, replica: String
    ) -> SyncChange {
        let values: [String: StoreValue] =
            delete
            ? [:]
            : base == nil
                ? [
                    "owner": .string(owner), "title": .string(title), "body": .string(body),
                    "edits": .int(Int64(edits)),
                ]
                : ["body": .string(body), "edits": .int(Int64(edits))]
        return SyncChange(
            globalID: global, entity: "Note", kind: delete ? .delete : base == nil ? .insert : .update, values: values,
            base: base.map { ["body": .string($0), "edits": .int(Int64(edits - 1))] } ?? [:],
            stamp: SyncStamp(milliseconds: 1_700_000_000_000, counter: Int32(edits), replica: replica))
    }

    /// The saves and commits the last push log line of each server counts, summed.
    private static func commits(_ servers: [ServerProcess]) -> (saves: Int, transactions: Int) {
        var total = (saves: 0, transactions: 0)
        for server in servers {
            let log = server.log
            func last(_ key: String) -> Int {
                guard let range = log.range(of: key + "=", options: .backwards) else { return 0 }
                return Int(log[range.upperBound...].prefix { $0.isNumber }) ?? 0
            }
            total.saves += last("store_saves")
            total.transactions += last("store_commits")
        }
        return total
    }

    @Test func concurrentPushesAreCommittedInFewerTransactionsThanSaves() async throws {
        for grouping in ["on", "off"] {
            let fixture = try await Fixture()
            defer { fixture.remove() }
            let servers = [
                try ServerProcess(fixture, extra: ["--group-commit", grouping]),
                try ServerProcess(fixture, extra: ["--group-commit", grouping]),
            ]
            var replicas: [Replica] = []
            for index in 0..<24 {
                replicas.append(
                    try await Replica(
                        "r\(index)", subject: "user\(index)", through: servers[index % 2], fixture: fixture))
            }
            var expected: [String] = []
            for round in 0..<3 {
                let applied = try await withThrowingTaskGroup(of: Bool.self) { group in
                    for replica in replicas {
                        group.addTask {
                            try await replica.push([
                                Self.change(
                                    UUID().uuidString, owner: replica.subject, title: "\(replica.name)-\(round)",
                                    body: "b", edits: 0, replica: replica.name)
                            ]).applied
                        }
                    }
                    return try await group.reduce(into: [Bool]()) { $0.append($1) }
                }
                #expect(applied == Array(repeating: true, count: replicas.count))
                expected += replicas.map { "\($0.subject)/\($0.name)-\(round): b (0)" }
            }
            // Every acknowledged note is stored, once.
            #expect(try fixture.sharedNotes() == expected.sorted())
            let counts = Self.commits(servers)
            #expect(counts.saves >= 72, "\(counts)")
            if grouping == "on" {
                #expect(counts.transactions < counts.saves, "\(counts)")
            } else {
                #expect(counts.transactions == counts.saves, "\(counts)")
            }
        }
    }

    @Test func aRefusedPushChangesNothingForThePushesBesideIt() async throws {
        let fixture = try await Fixture()
        defer { fixture.remove() }
        let servers = [try ServerProcess(fixture), try ServerProcess(fixture)]
        let bob = try await Replica("bob", subject: "bob", through: servers[0], fixture: fixture)
        let shared = UUID().uuidString
        #expect(
            try await bob.push([Self.change(shared, owner: "bob", title: "bob's", body: "v0", edits: 0, replica: "bob")]
            )
            .applied)
        var replicas: [Replica] = []
        for index in 0..<12 {
            replicas.append(
                try await Replica("r\(index)", subject: "user\(index)", through: servers[index % 2], fixture: fixture))
        }
        // At once: every replica adds a note of its own; r0 also adds one of bob's (refused whole,
        // 403), r1 changes bob's note (refused), and bob changes his note twice from the same base
        // through both servers (one is applied, the other is stale and stores nothing).
        let outcomes = try await withThrowingTaskGroup(of: (String, String).self) { group in
            for replica in replicas {
                group.addTask {
                    var changes = [
                        Self.change(
                            UUID().uuidString, owner: replica.subject, title: replica.name, body: "mine", edits: 0,
                            replica: replica.name)
                    ]
                    if replica.name == "r0" {
                        changes.append(
                            Self.change(
                                UUID().uuidString, owner: "bob", title: "forged", body: "x", edits: 0, replica: "r0"))
                    }
                    if replica.name == "r1" {
                        changes = [
                            Self.change(
                                shared, owner: "bob", title: "", body: "taken", edits: 1, base: "v0", replica: "r1")
                        ]
                    }
                    do {
                        return (replica.name, try await replica.push(changes).applied ? "applied" : "stale")
                    } catch let error as SyncError {
                        return (replica.name, "\(error.code)")
                    }
                }
            }
            for (index, server) in servers.enumerated() {
                group.addTask {
                    let other = try await Replica("bob-\(index)", subject: "bob", through: server, fixture: fixture)
                    let reply = try await other.push([
                        Self.change(
                            shared, owner: "bob", title: "", body: "v\(index + 1)", edits: 1, base: "v0",
                            replica: "bob-\(index)")
                    ])
                    return ("bob-\(index)", reply.applied ? "applied" : "stale")
                }
            }
            return try await group.reduce(into: [String: String]()) { $0[$1.0] = $1.1 }
        }
        for index in 2..<12 { #expect(outcomes["r\(index)"] == "applied", "\(outcomes)") }
        #expect(outcomes["r0"] != "applied" && outcomes["r0"] != "stale", "\(outcomes)")
        #expect(outcomes["r1"] != "applied" && outcomes["r1"] != "stale", "\(outcomes)")
        #expect(
            [outcomes["bob-0"], outcomes["bob-1"]].sorted { ($0 ?? "") < ($1 ?? "") } == ["applied", "stale"],
            "\(outcomes)")
        let winner = outcomes["bob-0"] == "applied" ? "v1" : "v2"
        var expected = (2..<12).map { "user\($0)/r\($0): mine (0)" }
        expected.append("bob/bob's: \(winner) (1)")
        #expect(try fixture.sharedNotes() == expected.sorted())
    }

    /// What one replica of the randomized test was acknowledged: its notes by global identifier.
    private struct Acknowledged {
        var notes: [String: (title: String, body: String, edits: Int)] = [:]
    }

    @Test func randomizedPushesFromManyReplicasEndAsEachWasAcknowledged() async throws {
        let seed = UInt64.random(in: 0...UInt64.max)
        let fixture = try await Fixture()
        defer { fixture.remove() }
        let servers = [try ServerProcess(fixture), try ServerProcess(fixture)]
        var replicas: [Replica] = []
        for index in 0..<16 {
            replicas.append(
                try await Replica(
                    "r\(index)", subject: "user\(index % 8)", through: servers[index % 2], fixture: fixture))
        }
        let oracles = try await withThrowingTaskGroup(of: (String, Acknowledged).self) { group in
            for (index, replica) in replicas.enumerated() {
                group.addTask {
                    var random = SyncTestRandom(seed: seed &+ UInt64(index))
                    var acknowledged = Acknowledged()
                    for step in 0..<12 {
                        let own = acknowledged.notes.keys.sorted()
                        let pick = own.isEmpty ? nil : own[random.int(own.count)]
                        var changes: [SyncChange] = []
                        var after = acknowledged
                        var outcome = "applied"
                        for note in 0..<(1 + random.int(3)) {
                            let global = "\(replica.name)-\(step)-\(note)"
                            let title = "\(replica.name)-\(step)-\(note)"
                            changes.append(
                                Self.change(
                                    global, owner: replica.subject, title: title, body: "new", edits: 0,
                                    replica: replica.name))
                            after.notes[global] = (title, "new", 0)
                        }
                        switch (random.int(5), pick) {
                        case (1, let global?):
                            // A change of its own note from what it holds: applied with the rest.
                            let note = acknowledged.notes[global]!
                            changes.append(
                                Self.change(
                                    global, owner: replica.subject, title: note.title, body: "s\(step)",
                                    edits: note.edits + 1, base: note.body, replica: replica.name))
                            after.notes[global] = (note.title, "s\(step)", note.edits + 1)
                        case (2, let global?):
                            // A change from a body it never held: the push is stale, nothing stored.
                            let note = acknowledged.notes[global]!
                            changes.append(
                                Self.change(
                                    global, owner: replica.subject, title: note.title, body: "lost",
                                    edits: note.edits + 1, base: "never", replica: replica.name))
                            outcome = "stale"
                        case (3, _):
                            // A note of another user: the push is refused, nothing stored.
                            changes.append(
                                Self.change(
                                    "\(replica.name)-\(step)-forged", owner: "nobody", title: "forged", body: "x",
                                    edits: 0, replica: replica.name))
                            outcome = "refused"
                        case (4, let global?):
                            changes.append(
                                Self.change(
                                    global, owner: replica.subject, title: "", body: "", edits: 0, delete: true,
                                    replica: replica.name))
                            after.notes[global] = nil
                        default:
                            break
                        }
                        let got: String
                        do {
                            got = try await replica.push(changes).applied ? "applied" : "stale"
                        } catch is SyncError {
                            got = "refused"
                        }
                        guard got == outcome else {
                            throw Mismatch(
                                description: "seed \(seed): \(replica.name) step \(step): \(got), not \(outcome)")
                        }
                        if got == "applied" { acknowledged = after }
                    }
                    return (replica.name, acknowledged)
                }
            }
            return try await group.reduce(into: [String: Acknowledged]()) { $0[$1.0] = $1.1 }
        }
        var expected: [String] = []
        for (index, replica) in replicas.enumerated() {
            for note in (oracles[replica.name]?.notes ?? [:]).values {
                expected.append("user\(index % 8)/\(note.title): \(note.body) (\(note.edits))")
            }
        }
        #expect(try fixture.sharedNotes() == expected.sorted(), "seed \(seed)")
        let counts = Self.commits(servers)
        #expect(counts.transactions < counts.saves, "seed \(seed): \(counts)")
    }

    /// A push whose outcome was not the one the replica's own state predicts.
    private struct Mismatch: Error, CustomStringConvertible {
        let description: String
    }
}

extension SyncTestRandom {
    /// A number from 0 to `upper` - 1.
    fileprivate mutating func int(_ upper: Int) -> Int { Int(next() % UInt64(upper)) }
}
