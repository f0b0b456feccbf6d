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
        CommandOption(
            name: "--token-file", value: "FILE",
            summary: "with an http(s) REMOTE: the file holding the bearer token (else MODELSTORE_SYNC_TOKEN)"),
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

        An http:// or https:// REMOTE is a sync server ('modelstore-sync-server'): the URL is where
        its hello, push, pull, fetch and changes paths live, and the bearer token comes from the
        file --token-file names or, without it, the environment variable MODELSTORE_SYNC_TOKEN
        (never from the command line, which other users can read, and never printed). A missing
        LOCAL is created with the server's schema.

        Examples:
          modelstore sync json:trips.json sqlite:shared.sqlite
          modelstore sync sqlite:phone.sqlite sqlite:shared.sqlite --json
          modelstore sync log:trips-log sqlite:shared.sqlite --watch
          MODELSTORE_SYNC_TOKEN=… modelstore sync json:trips.json https://sync.example.com/sync
        """

    static func run(_ invocation: Invocation, console: Console) throws -> any CommandReport {
        let local = try StoreReference(invocation.arguments[0])
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
        let remoteName = invocation.arguments[1]
        let transport: any SyncTransport
        let localSchema: Schema
        if let server = try RemoteServer.url(remoteName) {
            let http = HTTPSyncTransport(baseURL: server, token: try RemoteServer.token(invocation))
            transport = http
            localSchema =
                try isPresent(local)
                ? try Schema(local.storedSchema(for: "sync")).includingSyncMetadata()
                : try Schema(Blocking.run { try await http.schema() }).includingSyncMetadata()
        } else {
            let remote = try StoreReference(remoteName)
            let (ownSchema, remoteSchema) = try schemas(local, remote)
            let remoteContainer = try SyncStores.container(remote, schema: remoteSchema)
            transport = InProcessSyncTransport(host: try SyncHost(container: remoteContainer))
            localSchema = ownSchema
        }
        let localContainer = try SyncStores.container(local, schema: localSchema)
        let engine = try SyncEngine(container: localContainer, transport: transport, configuration: configuration)
        if invocation.has("--watch") {
            try Blocking.run { try await watch(engine, console: console) }
            return SyncEventLine(event: "stopped")
        }
        let progress = console.progress()
        defer { progress.finish() }
        progress.phase("syncing \(local.string) with \(remoteName)")
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
        return SyncReport(local: local.string, remote: remoteName, summary: summary, openConflicts: open)
    }

    /// The stored schemas of the two stores with the sync entities added; a missing store takes
    /// the other's.
    private static func schemas(_ local: StoreReference, _ remote: StoreReference) throws -> (Schema, Schema) {
        switch (try isPresent(local), try isPresent(remote)) {
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

    /// Whether a store is there to read its schema from: files at its path, or, for a store a
    /// server keeps (PostgreSQL), a schema the server has recorded.
    private static func isPresent(_ reference: StoreReference) throws -> Bool {
        if reference.exists || reference.isInMemory { return true }
        guard !reference.storesFiles, reference.scheme.maintenance != nil else { return false }
        do {
            _ = try reference.storedSchema(for: "sync")
            return true
        } catch let error as DataStoreError where error.code == .notFound {
            return false
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

/// A sync server as the remote: its URL and the token to present.
enum RemoteServer {
    /// The environment variable the token is read from when no --token-file is given.
    static let tokenVariable = "MODELSTORE_SYNC_TOKEN"

    /// The server URL `remote` names, or `nil` when it is a store URL; one with a user or password
    /// in it is refused, since the report would print it.
    static func url(_ remote: String) throws -> URL? {
        let lowered = remote.lowercased()
        guard lowered.hasPrefix("http://") || lowered.hasPrefix("https://") else { return nil }
        guard let url = URL(string: remote), let parts = URLComponents(url: url, resolvingAgainstBaseURL: false),
            parts.host?.isEmpty == false
        else {
            throw ToolError.usage(
                "'\(remote)' is not a server URL", remedy: "Write it as https://HOST:PORT/PATH")
        }
        guard parts.user == nil, parts.password == nil else {
            throw ToolError.usage(
                "the server URL has a user or password in it",
                remedy: "Put the bearer token in the file --token-file names, or in \(tokenVariable)")
        }
        return url
    }

    /// The bearer token from --token-file or the environment; `nil` when neither gives one.
    static func token(_ invocation: Invocation) throws -> String? {
        if let file = invocation.value("--token-file") {
            guard let data = FileManager.default.contents(atPath: file) else {
                throw ToolError.usage(
                    "the token file '\(file)' cannot be read",
                    remedy: "Check the path and its permissions; it holds the bearer token alone")
            }
            let token = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
            guard !token.isEmpty else {
                throw ToolError.usage("the token file '\(file)' is empty", remedy: "Write the bearer token into it")
            }
            return token
        }
        let token = ProcessInfo.processInfo.environment[tokenVariable]?.trimmingCharacters(in: .whitespacesAndNewlines)
        return token?.isEmpty == false ? token : nil
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
