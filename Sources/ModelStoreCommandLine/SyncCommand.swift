import Foundation
import ModelStore
import ModelStoreSync
import ModelStoreTooling

/// `modelstore sync LOCAL REMOTE`: one sync round between two stores, or rounds until stopped.
enum SyncCommand: Command {
    static let name = "sync"
    static let arguments = ["LOCAL", "REMOTE"]
    static let options = [
        CommandOption(name: "--watch", summary: "keep syncing, printing what moves, until interrupted"),
        CommandOption(
            name: "--policy", value: "POLICY",
            summary: "how a clash is decided: last-writer (default), remote or local"),
    ]
    static let summary = "sync a local store with a remote one: pull, merge, push"
    static let details = """
        Pulls REMOTE's changes into LOCAL, merging property by property against what the two last
        agreed on, then pushes LOCAL's changes to REMOTE. A property both changed to different
        values is decided by the policy and kept as a conflict ('modelstore conflicts LOCAL').
        Either store may be missing: it is created with the other's schema, so the first sync of a
        new device is 'modelstore sync sqlite:new.sqlite sqlite:shared.sqlite'. Both stores record
        the sync engine's bookkeeping beside their models (a lightweight migration the first time).
        Stores whose models differ are refused before anything moves, naming the one that is behind.

        Examples:
          modelstore sync json:trips.json sqlite:shared.sqlite
          modelstore sync sqlite:phone.sqlite sqlite:shared.sqlite --json
          modelstore sync log:trips-log sqlite:shared.sqlite --watch
        """

    static func run(_ invocation: Invocation, console: Console) throws -> any CommandReport {
        let local = try StoreReference(invocation.arguments[0])
        let remote = try StoreReference(invocation.arguments[1])
        var configuration = SyncConfiguration()
        switch invocation.value("--policy") ?? "last-writer" {
        case "last-writer": configuration.defaultPolicy = .lastWriterWins
        case "remote": configuration.defaultPolicy = .remoteWins
        case "local": configuration.defaultPolicy = .localWins
        case let other:
            throw ToolError.usage(
                "'\(other)' is not a policy",
                remedy: "Use '--policy last-writer', '--policy remote' or '--policy local'")
        }
        let (localSchema, remoteSchema) = try schemas(local, remote)
        let localContainer = try SyncStores.container(local, schema: localSchema)
        let remoteContainer = try SyncStores.container(remote, schema: remoteSchema)
        let host = try SyncHost(container: remoteContainer)
        let engine = try SyncEngine(
            container: localContainer, transport: InProcessSyncTransport(host: host), configuration: configuration)
        if invocation.has("--watch") {
            try Blocking.run { try await watch(engine, console: console) }
            return SyncEventLine(event: "stopped")
        }
        let progress = console.progress()
        defer { progress.finish() }
        progress.phase("syncing \(local.string) with \(remote.string)")
        let events = engine.events
        let counter = Task {
            for await event in events {
                switch event {
                case .pulled(let count): progress.advance(by: count)
                case .pushed(let count): progress.advance(by: count)
                default: break
                }
            }
        }
        defer { counter.cancel() }
        let summary = try Blocking.run { try await engine.syncNow() }
        let open = try engine.conflicts.list().count
        return SyncReport(local: local.string, remote: remote.string, summary: summary, openConflicts: open)
    }

    /// The stored schemas of the two stores with the sync entities added; a missing store takes
    /// the other's.
    private static func schemas(_ local: StoreReference, _ remote: StoreReference) throws -> (Schema, Schema) {
        switch (local.exists || local.isInMemory, remote.exists || remote.isInMemory) {
        case (true, true):
            return (
                try Schema(local.storedSchema(for: "sync")).includingSyncMetadata(),
                try Schema(remote.storedSchema(for: "sync")).includingSyncMetadata()
            )
        case (true, false):
            let schema = try Schema(local.storedSchema(for: "sync")).includingSyncMetadata()
            return (schema, schema)
        case (false, true):
            let schema = try Schema(remote.storedSchema(for: "sync")).includingSyncMetadata()
            return (schema, schema)
        case (false, false):
            throw DataStoreError(
                .notFound, "neither '\(local.string)' nor '\(remote.string)' exists, so there is no schema to sync",
                remedy: "Create one of them with the app first")
        }
    }

    private static func watch(_ engine: SyncEngine, console: Console) async throws {
        let events = engine.events
        await engine.start()
        for await event in events {
            if console.json {
                console.print(SyncEventLine(event: event.description))
            } else {
                print(event.description)
            }
        }
    }
}

/// Opening stores for sync without model types.
enum SyncStores {
    /// A container for the store a reference names, with the configuration its maintenance asks for.
    static func container(_ reference: StoreReference, schema: Schema) throws -> ModelContainer {
        var configuration = try reference.configuration()
        configuration = reference.scheme.maintenance?.configurationForMaintenance(configuration) ?? configuration
        return try ModelContainer(for: schema, configurations: [configuration])
    }
}

/// Runs async work from the tool's synchronous commands.
enum Blocking {
    /// Runs `body` on the cooperative pool and waits on this thread (the tool's main thread, which
    /// the pool does not use) for its result.
    static func run<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) throws -> T {
        let result = LockedValue<Result<T, any Error>?>(nil)
        let done = DispatchSemaphore(value: 0)
        Task.detached {
            do {
                let value = try await body()
                result.withLock { $0 = .success(value) }
            } catch {
                result.withLock { $0 = .failure(error) }
            }
            done.signal()
        }
        done.wait()
        guard let outcome = result.withLock({ $0 }) else { preconditionFailure("the task ended without a result") }
        return try outcome.get()
    }
}

/// What `sync` reports.
struct SyncReport: CommandReport {
    let local: String
    let remote: String
    let pushed: Int
    let pulled: Int
    let conflicts: Int
    let openConflicts: Int

    init(local: String, remote: String, summary: SyncSummary, openConflicts: Int) {
        self.local = local
        self.remote = remote
        pushed = summary.pushed
        pulled = summary.pulled
        conflicts = summary.conflicts
        self.openConflicts = openConflicts
    }

    var text: String {
        var line =
            "Synced \(local) with \(remote): pushed \(ReportFormat.count(pushed, "change")), "
            + "pulled \(ReportFormat.count(pulled, "change")), \(ReportFormat.count(conflicts, "conflict")) decided."
        if openConflicts > 0 {
            line +=
                "\n\(ReportFormat.count(openConflicts, "open conflict")): 'modelstore conflicts \(local)' lists them."
        }
        return line
    }
}

/// One event of `sync --watch`.
struct SyncEventLine: CommandReport {
    let event: String
    var text: String { event }
}
