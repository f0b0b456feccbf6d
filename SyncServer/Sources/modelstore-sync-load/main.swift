import Foundation
import ModelStore
import ModelStoreAdapters
import ModelStoreSync
import ModelStoreSyncServer
import SyncTestModels

// `modelstore-sync-load --store postgres://… [--clients 50] [--seconds 60] [--group 5] [--rate 1]
// [--change-notifications on|off] [--group-commit on|off] [--server-logs DIR]`:
// starts two modelstore-sync-server processes (the binary beside this one) on loopback over the
// store, then runs CLIENTS sync engines in this process, each on a SQLite store of its own and
// through one of the two servers, in groups of GROUP sharing an owner. Each client saves RATE notes
// a second for SECONDS; every engine runs continuously and pulls only when its server announces a
// change (no polling). Afterwards it waits up to 30 s for every note to reach every client of its
// group and prints changes per second, the propagation time from a save to another client's store
// (p50, p99, max), how many (note, client) deliveries never happened, the engines' requests per
// save by kind, how many announcements carried their changes, and the servers' saves to the store
// and the transactions that committed them (from their last push's log line). The servers wake each other
// with PostgreSQL NOTIFY unless `--change-notifications off`, which leaves them polling every 100 ms;
// `--group-commit on|off` is passed to the servers (on, their default, commits concurrent pushes together).
// `--server-logs DIR` keeps the servers' logs (a line per request, with its milliseconds) in DIR.
let arguments = Array(CommandLine.arguments.dropFirst())
func value(_ name: String) -> String? { arguments.firstIndex(of: name).map { arguments[$0 + 1] } }
guard let store = value("--store") else {
    print(
        """
        usage: modelstore-sync-load --store URL [--clients N] [--seconds S] [--group G]
                 [--rate R] [--change-notifications on|off] [--group-commit on|off]
                 [--server-logs DIR]
        """)
    exit(2)
}
let clientCount = value("--clients").flatMap(Int.init) ?? 50
let seconds = value("--seconds").flatMap(Double.init) ?? 60
let groupSize = value("--group").flatMap(Int.init) ?? 5
let rate = value("--rate").flatMap(Double.init) ?? 1

let directory = FileManager.default.temporaryDirectory.appendingPathComponent("sync-load-\(UUID().uuidString)")
try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
defer { try? FileManager.default.removeItem(at: directory) }
let keyFile = directory.appendingPathComponent("key")
try Data((0..<32).map { _ in String(format: "%02x", UInt8.random(in: 0...255)) }.joined().utf8).write(to: keyFile)
let schemaFile = directory.appendingPathComponent("schema.json")
try SyncTestSchema.write(to: schemaFile)
let verifier = try await SyncTokenVerifier.reading(keyFile: keyFile.path)

/// Starts a server and returns it with its base URL and its log.
func startServer() throws -> (Process, URL, URL) {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        .appendingPathComponent("modelstore-sync-server")
    process.arguments =
        [
            "--store", store, "--schema", schemaFile.path, "--jwt-key-file", keyFile.path, "--port", "0",
            "--scope-attribute", "owner", "--rate", "100000",
        ] + (value("--change-notifications").map { ["--change-notifications", $0] } ?? [])
        + (value("--group-commit").map { ["--group-commit", $0] } ?? [])
    let log = (value("--server-logs").map { URL(fileURLWithPath: $0) } ?? directory).appendingPathComponent(
        "server-\(UUID().uuidString.prefix(6)).log")
    _ = FileManager.default.createFile(atPath: log.path, contents: nil)
    let handle = try FileHandle(forWritingTo: log)
    process.standardOutput = handle
    process.standardError = handle
    try process.run()
    for _ in 0..<600 {
        let text = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
        if let range = text.range(of: "listening on http://127.0.0.1:") {
            let port = text[range.upperBound...].prefix { $0.isNumber }
            return (process, URL(string: "http://127.0.0.1:\(port)/sync")!, log)
        }
        Thread.sleep(forTimeInterval: 0.1)
    }
    throw CocoaError(.fileReadUnknown)
}

let servers = [try startServer(), try startServer()]
/// Stops the servers and removes the run's directory: on a thrown error through `defer`, before
/// `exit` (which runs no `defer`) explicitly.
func cleanUp() {
    for (process, _, _) in servers where process.isRunning {
        process.terminate()
        process.waitUntilExit()
    }
    try? FileManager.default.removeItem(at: directory)
}
defer { cleanUp() }

/// Arrival times by client, by note title.
final class Arrivals: @unchecked Sendable {
    // Safety: every access holds `lock`.
    private let lock = NSLock()
    private var seen: [Int: [String: Double]] = [:]
    func record(_ client: Int, _ title: String, _ delay: Double) {
        lock.withLock { if seen[client, default: [:]][title] == nil { seen[client, default: [:]][title] = delay } }
    }
    func snapshot() -> [Int: [String: Double]] { lock.withLock { seen } }
}
let arrivals = Arrivals()
func now() -> Double { Date().timeIntervalSince1970 * 1000 }

var configuration = SyncConfiguration()
configuration.debounce = .milliseconds(10)
configuration.pollInterval = .seconds(3600)
var containers: [ModelContainer] = []
var engines: [SyncEngine] = []
var transports: [CountingSyncTransport] = []
for index in 0..<clientCount {
    let container = try ModelContainer(
        for: SyncTestSchema.schema, url: "sqlite:" + directory.appendingPathComponent("c\(index).sqlite").path)
    let token = try await verifier.sign(subject: "user\(index / groupSize)", expires: Date().addingTimeInterval(3600))
    let transport = CountingSyncTransport(HTTPSyncTransport(baseURL: servers[index % 2].1, token: token))
    transports.append(transport)
    engines.append(try SyncEngine(container: container, transport: transport, configuration: configuration))
    containers.append(container)
    let changes = container.changes
    Task.detached {
        for await change in changes where change.author == SyncEngine.author {
            let context = ModelContext(container)
            let arrived = now()
            for id in change.insertedIdentifiers {
                guard let note = try? context.model(for: id) as? Note, let saved = Double(note.body) else { continue }
                arrivals.record(index, note.title, arrived - saved)
            }
        }
    }
}
for engine in engines { await engine.start() }
print(
    "sync-load: \(clientCount) clients in groups of \(groupSize), two servers, \(rate) saves/s each, \(Int(seconds)) s")

let saved = LockedValue<[Int: [String]]>([:])
let deadline = Date().addingTimeInterval(seconds)
await withTaskGroup(of: Void.self) { group in
    for index in 0..<clientCount {
        let container = containers[index]
        group.addTask {
            var count = 0
            try? await Task.sleep(for: .milliseconds(Int.random(in: 0...Int(1000 / rate))))
            while Date() < deadline {
                let title = "c\(index)-\(count)"
                let context = ModelContext(container)
                context.insert(Note(owner: "user\(index / groupSize)", title: title, body: String(now())))
                if (try? context.save()) != nil {
                    saved.withLock { $0[index, default: []].append(title) }
                    count += 1
                }
                try? await Task.sleep(for: .milliseconds(Int(1000 / rate)))
            }
        }
    }
}

/// Every (note, other client of its group) pair that should be delivered.
func expectedDeliveries() -> [(client: Int, title: String)] {
    let all = saved.withLock { $0 }
    var pairs: [(Int, String)] = []
    for (writer, titles) in all {
        let group = writer / groupSize
        for reader in (group * groupSize)..<min(clientCount, (group + 1) * groupSize) where reader != writer {
            pairs += titles.map { (reader, $0) }
        }
    }
    return pairs
}
let expected = expectedDeliveries()
let settleDeadline = Date().addingTimeInterval(30)
var missing = expected.count
while Date() < settleDeadline {
    let seen = arrivals.snapshot()
    missing = expected.filter { seen[$0.client]?[$0.title] == nil }.count
    if missing == 0 { break }
    try await Task.sleep(for: .milliseconds(200))
}
for engine in engines { await engine.stop() }
let seen = arrivals.snapshot()
let delays = expected.compactMap { seen[$0.client]?[$0.title] }.sorted()
func percentile(_ p: Double) -> Double {
    delays.isEmpty ? .nan : delays[min(delays.count - 1, Int(Double(delays.count) * p))]
}
let savedCount = saved.withLock { $0.values.reduce(0) { $0 + $1.count } }
print(
    String(
        format: "sync-load: %d saves (%.1f changes/s pushed), %d deliveries expected, %d missing; "
            + "propagation p50 %.0f ms, p99 %.0f ms, max %.0f ms",
        savedCount, Double(savedCount) / seconds, expected.count, missing, percentile(0.5), percentile(0.99),
        delays.last ?? .nan))
// The engines' requests (the change streams aside), from their start to the end of the settling.
let requests = transports.reduce(into: [String: Int]()) { total, transport in
    total.merge(transport.counts, uniquingKeysWith: +)
}
let requestCount = requests.values.reduce(0, +)
let perSave = Double(requestCount) / Double(max(1, savedCount))
let byKind: [String] = requests.keys.sorted().map { kind in "\(kind) \(requests[kind] ?? 0)" }
print(
    String(format: "sync-load: %d requests, %.2f per save", requestCount, perSave)
        + " (\(byKind.joined(separator: ", ")))")
// Announcements that carried their changes: no request, unless they did not join the engine's cursor.
let carried = transports.reduce(0) { $0 + $1.carriedAnnouncements }
print(
    String(
        format: "sync-load: %d announcements carried changes, %.2f per save", carried,
        Double(carried) / Double(max(1, savedCount))))
// The servers' saves and the transactions that committed them: each push's log line shows its
// server's counts so far, so the last one of each log has them all.
var commits = (saves: 0, transactions: 0)
for (_, _, log) in servers {
    let text = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
    func last(_ key: String) -> Int {
        guard let range = text.range(of: key + "=", options: .backwards) else { return 0 }
        return Int(text[range.upperBound...].prefix { $0.isNumber }) ?? 0
    }
    commits.saves += last("store_saves")
    commits.transactions += last("store_commits")
}
print(
    String(
        format: "sync-load: the servers committed %d saves in %d transactions (%.2f saves each)", commits.saves,
        commits.transactions, Double(commits.saves) / Double(max(1, commits.transactions))))
cleanUp()
exit(missing == 0 ? 0 : 1)
