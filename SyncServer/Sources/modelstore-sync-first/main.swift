import Foundation
import ModelStore
import ModelStoreAdapters
import ModelStoreSync
import ModelStoreSyncServer
import SyncTestModels

// `modelstore-sync-first --store postgres://… [--models 10000] [--reps 5] [--page 1000]`: the first
// sync of a replica over HTTP with change sets packed and as JSON arrays, side by side on one
// server process (the `modelstore-sync-server` beside this binary) on loopback. Each repetition
// runs both forms, alternating which goes first: "pull", a new empty replica's first round, which
// pulls MODELS notes a seeding client pushed once; and "push", a new replica holding MODELS notes of
// its own (a new owner each time) whose first round pushes them all. The forms differ only in the
// transport's `packedChanges`; the server reads and writes both. Prints each run's milliseconds,
// then the medians and the ratios packed / arrays.
let arguments = Array(CommandLine.arguments.dropFirst())
func value(_ name: String) -> String? { arguments.firstIndex(of: name).map { arguments[$0 + 1] } }
guard let store = value("--store") else {
    print("usage: modelstore-sync-first --store URL [--models N] [--reps R] [--page P]")
    exit(2)
}
let modelCount = value("--models").flatMap(Int.init) ?? 10_000
let reps = value("--reps").flatMap(Int.init) ?? 5
let pageSize = value("--page").flatMap(Int.init) ?? 1000

let directory = FileManager.default.temporaryDirectory.appendingPathComponent("sync-first-\(UUID().uuidString)")
try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
let keyFile = directory.appendingPathComponent("key")
try Data((0..<32).map { _ in String(format: "%02x", UInt8.random(in: 0...255)) }.joined().utf8).write(to: keyFile)
let schemaFile = directory.appendingPathComponent("schema.json")
try SyncTestSchema.write(to: schemaFile)
let verifier = try await SyncTokenVerifier.reading(keyFile: keyFile.path)

let server = Process()
server.executableURL = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
    .appendingPathComponent("modelstore-sync-server")
server.arguments = [
    "--store", store, "--schema", schemaFile.path, "--jwt-key-file", keyFile.path, "--port", "0",
    "--scope-attribute", "owner", "--rate", "100000",
]
let log = directory.appendingPathComponent("server.log")
_ = FileManager.default.createFile(atPath: log.path, contents: nil)
let handle = try FileHandle(forWritingTo: log)
server.standardOutput = handle
server.standardError = handle
try server.run()
var baseURL: URL?
for _ in 0..<600 where baseURL == nil {
    let text = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
    if let range = text.range(of: "listening on http://127.0.0.1:") {
        baseURL = URL(string: "http://127.0.0.1:\(text[range.upperBound...].prefix { $0.isNumber })/sync")
    } else {
        try await Task.sleep(for: .milliseconds(100))
    }
}
/// Stops the server and removes the run's directory.
func cleanUp() {
    if server.isRunning {
        server.terminate()
        server.waitUntilExit()
    }
    try? FileManager.default.removeItem(at: directory)
}
guard let baseURL else {
    cleanUp()
    print("modelstore-sync-first: the server did not start")
    exit(1)
}

/// A first pull that did not bring every model.
struct Shortfall: Error, CustomStringConvertible {
    let pulled: Int
    let expected: Int
    var description: String { "the first pull brought \(pulled) of the \(expected) models" }
}

let configuration = {
    var configuration = SyncConfiguration()
    configuration.pageSize = pageSize
    return configuration
}()
/// A new replica of `owner` through the server, packing or not.
func replica(_ name: String, owner: String, packed: Bool) async throws -> (ModelContainer, SyncEngine) {
    let container = try ModelContainer(
        for: SyncTestSchema.schema, url: "sqlite:" + directory.appendingPathComponent("\(name).sqlite").path)
    let token = try await verifier.sign(subject: owner, expires: Date().addingTimeInterval(3600))
    let transport = HTTPSyncTransport(baseURL: baseURL, token: token, timeout: 120, packedChanges: packed)
    return (container, try SyncEngine(container: container, transport: transport, configuration: configuration))
}
/// Saves `count` notes of `owner` in `container`, in saves of a thousand.
func addNotes(_ container: ModelContainer, owner: String, count: Int) throws {
    var index = 0
    while index < count {
        let context = ModelContext(container)
        for _ in 0..<min(1000, count - index) {
            context.insert(Note(owner: owner, title: "\(owner) \(index)", body: "body of note \(index) of \(owner)"))
            index += 1
        }
        try context.save()
    }
}
func milliseconds(_ duration: Duration) -> Double {
    Double(duration.components.seconds) * 1000 + Double(duration.components.attoseconds) / 1e15
}

do {
    let (seed, seeder) = try await replica("seed", owner: "seed", packed: true)
    try addNotes(seed, owner: "seed", count: modelCount)
    _ = try await seeder.syncNow()
    print(
        "modelstore-sync-first: \(modelCount) models, pages of \(pageSize), \(reps) repetitions, one server on loopback"
    )
    var times: [String: [Double]] = [:]
    let clock = ContinuousClock()
    for rep in 0..<reps {
        for packed in rep % 2 == 0 ? [true, false] : [false, true] {
            let form = packed ? "packed" : "arrays"
            let (pullContainer, puller) = try await replica("pull-\(rep)-\(form)", owner: "seed", packed: packed)
            let pulled = try await clock.measure { _ = try await puller.syncNow() }
            let count = try ModelContext(pullContainer).fetchCount(FetchDescriptor<Note>())
            guard count == modelCount else { throw Shortfall(pulled: count, expected: modelCount) }
            let owner = "push-\(rep)-\(form)"
            let (pushContainer, pusher) = try await replica(owner, owner: owner, packed: packed)
            try addNotes(pushContainer, owner: owner, count: modelCount)
            let pushed = try await clock.measure { _ = try await pusher.syncNow() }
            times["pull " + form, default: []].append(milliseconds(pulled))
            times["push " + form, default: []].append(milliseconds(pushed))
            print(
                String(
                    format: "modelstore-sync-first: rep %d %@: pull %.0f ms, push %.0f ms", rep, form,
                    milliseconds(pulled), milliseconds(pushed)))
        }
    }
    func median(_ values: [Double]) -> Double {
        let sorted = values.sorted()
        return sorted.count % 2 == 1
            ? sorted[sorted.count / 2] : (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
    }
    for direction in ["pull", "push"] {
        let packed = median(times["\(direction) packed"] ?? [])
        let arrays = median(times["\(direction) arrays"] ?? [])
        print(
            String(
                format: "modelstore-sync-first: %@ median packed %.0f ms, arrays %.0f ms, packed/arrays %.2fx "
                    + "(%.0f vs %.0f models/s)", direction, packed, arrays, packed / arrays,
                Double(modelCount) / packed * 1000, Double(modelCount) / arrays * 1000))
    }
    // What the server logged: the packed requests it saw, as a check that the forms differed.
    let text = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
    let packedLines = text.split(separator: "\n").filter { $0.contains("packed=") }.count
    print("modelstore-sync-first: the server logged \(packedLines) requests with packed change sets")
} catch {
    cleanUp()
    print("modelstore-sync-first: \(error)")
    exit(1)
}
cleanUp()
