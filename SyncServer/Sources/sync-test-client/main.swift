import Foundation
import ModelStore
import ModelStoreAdapters
import ModelStoreSync
import SyncTestModels

// `sync-test-client STORE URL TOKEN-FILE TIMEOUT add OWNER TITLE… | sync | list`: one client action
// per process, for tests that run clients in other network namespaces. `add` saves notes locally
// (and does not sync); `sync` runs one round and prints `synced` or `failed: CODE transient|permanent: MESSAGE`;
// `list` prints the notes. `sync-test-client schema FILE` writes the schema file a server takes.
let arguments = Array(CommandLine.arguments.dropFirst())
if arguments.count == 2, arguments[0] == "schema" {
    try SyncTestSchema.write(to: URL(fileURLWithPath: arguments[1]))
    exit(0)
}
guard arguments.count >= 5, let timeout = Double(arguments[3]) else {
    FileHandle.standardError.write(Data("usage: sync-test-client STORE URL TOKEN-FILE TIMEOUT add|sync|list …\n".utf8))
    exit(2)
}
let container = try ModelContainer(for: SyncTestSchema.schema, url: arguments[0])
let token = try String(contentsOfFile: arguments[2], encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
guard let url = URL(string: arguments[1]) else { exit(2) }
let transport = HTTPSyncTransport(baseURL: url, token: token, timeout: timeout)
switch arguments[4] {
case "add":
    let context = ModelContext(container)
    let owner = arguments[5]
    for title in arguments.dropFirst(6) { context.insert(Note(owner: owner, title: title, body: "from the client")) }
    try context.save()
    print("added \(arguments.count - 6)")
case "sync":
    let engine = try SyncEngine(container: container, transport: transport)
    do {
        let summary = try await engine.syncNow()
        print("synced pushed=\(summary.pushed) pulled=\(summary.pulled)")
    } catch let error as SyncError {
        print("failed: \(error.code) \(error.isTransient ? "transient" : "permanent"): \(error.message)")
    }
case "list":
    for line in try SyncTestSchema.notes(in: container) { print(line) }
default:
    exit(2)
}
