import Foundation
import ModelStore
import ModelStoreAdapters
import ModelStoreSync

/// The last clean round and its checks: every replica runs rounds until all agree, then nothing
/// acknowledged is missing or doubled anywhere, every replica holds what the shared store holds,
/// and the shared store holds one model per global identifier.
struct SyncCrashChecker {
    /// A replica: the writer's name, its local store and its acknowledgement file.
    struct Member {
        let writer: String
        let localURL: String
        let acknowledgements: String
    }

    let sharedURL: String
    let members: [Member]

    /// The problems found; empty when the run passed. `acknowledged` counts every writer's
    /// acknowledged operations.
    func run() async throws -> (acknowledged: Int, notes: Int, problems: [String]) {
        let host = try SyncHost(container: ModelContainer(for: syncCrashSchema, url: sharedURL))
        var containers: [ModelContainer] = []
        var engines: [SyncEngine] = []
        for member in members {
            let container = try ModelContainer(for: syncCrashSchema, url: member.localURL)
            containers.append(container)
            engines.append(
                try SyncEngine(
                    container: container, transport: InProcessSyncTransport(host: host),
                    configuration: syncCrashConfiguration))
        }
        // Two passes bring every replica's changes to every other one; a third must move nothing.
        for _ in 0..<2 {
            for engine in engines { try await engine.syncNow() }
        }
        var problems: [String] = []
        for (member, engine) in zip(members, engines) {
            let quiet = try await engine.syncNow()
            if quiet.pushed + quiet.pulled + quiet.conflicts > 0 {
                problems.append("'\(member.writer)' still moved \(quiet) in a round after two passes")
            }
        }
        // What each writer's acknowledged operations leave, or one more (the one in flight at the kill).
        var acknowledged = 0
        var allowed: [String: [[String: Int]]] = [:]
        for member in members {
            let count = try SyncCrashWriter.acknowledgedCount(member.acknowledgements)
            acknowledged += count
            allowed[member.writer] = [
                SyncCrashWorkload.expected(writer: member.writer, count: count),
                SyncCrashWorkload.expected(writer: member.writer, count: count + 1),
            ]
        }
        let shared = try notes(in: host.container, named: "the shared store", problems: &problems)
        for (writer, choices) in allowed.sorted(by: { $0.key < $1.key }) {
            let held = shared.filter { $0.key.hasPrefix(writer + "-") }
            if !choices.contains(held) {
                let missing = choices[0].keys.filter { held[$0] == nil }.sorted()
                let extra = held.keys.filter { choices[1][$0] == nil && choices[0][$0] == nil }.sorted()
                problems.append(
                    "the shared store's notes of '\(writer)' differ from its acknowledged operations: "
                        + "missing \(missing.prefix(10)), unexpected \(extra.prefix(10)), "
                        + "\(held.count) held, \(choices[0].count) acknowledged")
            }
        }
        for (member, container) in zip(members, containers) {
            let local = try notes(in: container, named: "'\(member.writer)'", problems: &problems)
            if local != shared {
                let differing = Set(local.keys).symmetricDifference(shared.keys).sorted().prefix(10)
                problems.append(
                    "'\(member.writer)' holds \(local.count) notes, the shared store \(shared.count); "
                        + "differing keys \(Array(differing))")
            }
        }
        try checkRecords(host.container, problems: &problems)
        return (acknowledged, shared.count, problems)
    }

    /// A store's notes by key; a key held twice is a problem.
    private func notes(
        in container: ModelContainer, named name: String, problems: inout [String]
    ) throws -> [String: Int] {
        var notes: [String: Int] = [:]
        for note in try ModelContext(container).fetch(FetchDescriptor<CrashNote>()) {
            if notes.updateValue(note.value, forKey: note.key) != nil {
                problems.append("\(name) holds note '\(note.key)' twice")
            }
        }
        return notes
    }

    /// One record per global identifier, and one live record per model, in the shared store.
    private func checkRecords(_ container: ModelContainer, problems: inout [String]) throws {
        let store = container.stores[0]
        let request = DataStoreFetchRequest<SchemaOnlyModel>(
            descriptor: FetchDescriptor(), editingState: EditingState(),
            query: StoreQuery(entityName: SyncMetadata.recordEntityName(for: "CrashNote")))
        let records = try store.fetchErased(request).snapshots
        var globals = Set<String>()
        var models: [PersistentIdentifier: Int] = [:]
        for record in records {
            if case .string(let global)? = record["globalID"], !globals.insert(global).inserted {
                problems.append("the shared store has two records of global identifier '\(global)'")
            }
            if case .reference(let model)? = record["model"] { models[model, default: 0] += 1 }
        }
        for (model, count) in models where count > 1 {
            problems.append("the shared store's model '\(model.primaryKey)' has \(count) records")
        }
        let live = try ModelContext(container).fetch(FetchDescriptor<CrashNote>())
        for note in live where models[note.persistentModelID] == nil {
            problems.append("the shared store's note '\(note.key)' has no record (no global identifier)")
        }
    }
}
