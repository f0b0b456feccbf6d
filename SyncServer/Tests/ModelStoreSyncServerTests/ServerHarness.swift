import Foundation
import ModelStore
import ModelStoreAdapters
import ModelStorePostgreSQL
import ModelStoreSync
import ModelStoreSyncServer
import SyncTestModels
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The PostgreSQL server the tests run against: `MODELSTORE_POSTGRES_URL` (set by `scripts/postgres.sh run`).
enum Database {
    static let url = ProcessInfo.processInfo.environment["MODELSTORE_POSTGRES_URL"]
    static let isConfigured = url != nil
    static let skipMessage: Comment =
        "MODELSTORE_POSTGRES_URL is not set: run 'scripts/postgres.sh run -- swift test --package-path SyncServer'"

    /// A store URL in a PostgreSQL namespace no other test uses.
    static func freshStore() throws -> String {
        let namespace = "sync_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").prefix(12).lowercased()
        return try #require(url) + "?namespace=" + namespace
    }
}

/// The guard that keeps a run meant for a server from passing without one.
struct DatabaseRequiredTests {
    @Test func aRunThatRequiresAServerHasOne() {
        guard ProcessInfo.processInfo.environment["MODELSTORE_POSTGRES_REQUIRED"] == "1" else { return }
        #expect(Database.isConfigured, "scripts/postgres.sh started no server, so every suite here would be skipped")
    }
}

/// A test's directory, key, schema file and shared store.
struct Fixture {
    let directory: URL
    let store: String
    let keyFile: URL
    let schemaFile: URL
    let verifier: SyncTokenVerifier

    init() async throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("sync-server-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        store = try Database.freshStore()
        keyFile = directory.appendingPathComponent("jwt.key")
        let secret = (0..<32).map { _ in String(format: "%02x", UInt8.random(in: 0...255)) }.joined()
        try Data((secret + "\n").utf8).write(to: keyFile)
        schemaFile = directory.appendingPathComponent("schema.json")
        try SyncTestSchema.write(to: schemaFile)
        verifier = try await SyncTokenVerifier.reading(keyFile: keyFile.path)
    }

    /// A token for `subject`, valid for an hour unless told otherwise.
    func token(_ subject: String, expiresIn seconds: TimeInterval = 3600) async throws -> String {
        try await verifier.sign(subject: subject, expires: Date().addingTimeInterval(seconds))
    }

    /// A file holding a token for `subject`.
    func tokenFile(_ subject: String) async throws -> URL {
        let file = directory.appendingPathComponent("token-\(subject)-\(UUID().uuidString.prefix(6))")
        try Data(try await token(subject).utf8).write(to: file)
        return file
    }

    /// A local replica for `subject` through `server`.
    func client(
        _ name: String, scheme: String = "sqlite", subject: String, through server: ServerProcess,
        configuration: SyncConfiguration = SyncConfiguration(), schema: Schema = SyncTestSchema.schema
    ) async throws -> Client {
        let path = directory.appendingPathComponent(name + (scheme == "json" ? ".json" : ".sqlite")).path
        let container = try ModelContainer(for: schema, url: "\(scheme):\(path)")
        let transport = HTTPSyncTransport(baseURL: server.baseURL, token: try await token(subject), timeout: 10)
        let engine = try SyncEngine(container: container, transport: transport, configuration: configuration)
        return Client(container: container, engine: engine, owner: subject)
    }

    /// The shared store opened directly, to see what the servers stored.
    func sharedNotes() throws -> [String] {
        try SyncTestSchema.notes(in: ModelContainer(for: SyncTestSchema.schema, url: store))
    }

    func remove() { try? FileManager.default.removeItem(at: directory) }
}

/// One client replica.
struct Client {
    let container: ModelContainer
    let engine: SyncEngine
    let owner: String

    func add(_ titles: String..., body: String = "") throws {
        let context = ModelContext(container)
        for title in titles { context.insert(Note(owner: owner, title: title, body: body)) }
        try context.save()
    }

    func edit(_ title: String, _ change: (Note) -> Void) throws {
        let context = ModelContext(container)
        let note = try #require(try context.fetch(FetchDescriptor<Note>()).first { $0.title == title })
        change(note)
        try context.save()
    }

    func notes() throws -> [String] { try SyncTestSchema.notes(in: container) }
}

/// A `modelstore-sync-server` process, started with `--port 0`, its output kept for inspection.
final class ServerProcess: @unchecked Sendable {
    // Safety: `output` is written by the pipe's reader thread and read by the test, both under `lock`.
    let process = Process()
    let port: Int
    let host: String
    /// `https` when the server says it listens with TLS (a certificate from its options or its
    /// environment), else `http`.
    let scheme: String
    private let lock = NSLock()
    private var output = Data()

    /// The server built beside the test bundle.
    static var executable: URL {
        URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
            .appendingPathComponent("modelstore-sync-server")
    }

    var baseURL: URL { URL(string: "\(scheme)://\(host):\(port)/sync")! }

    /// Starts a server on `fixture`'s store, with `environment` added to this process's, and waits
    /// until it listens.
    init(
        _ fixture: Fixture, host: String = "127.0.0.1", extra: [String] = [], scope: String? = "owner",
        environment: [String: String] = [:]
    ) throws {
        self.host = host
        process.executableURL = Self.executable
        if !environment.isEmpty {
            process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        }
        process.arguments =
            [
                "--store", fixture.store, "--schema", fixture.schemaFile.path, "--jwt-key-file", fixture.keyFile.path,
                "--host", host, "--port", "0",
            ] + (scope.map { ["--scope-attribute", $0] } ?? []) + extra
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        let reader = pipe.fileHandleForReading
        let started = Date()
        var listening: (scheme: String, port: Int)?
        var buffer = Data()
        while listening == nil, Date().timeIntervalSince(started) < 60, process.isRunning {
            let chunk = reader.availableData
            if chunk.isEmpty { break }
            buffer.append(chunk)
            let text = String(decoding: buffer, as: UTF8.self)
            // The scheme the server prints, whichever of its options or environment asked for TLS.
            for scheme in ["http", "https"] {
                if let range = text.range(of: "listening on \(scheme)://\(host):") {
                    let digits = text[range.upperBound...].prefix { $0.isNumber }
                    listening = Int(digits).map { (scheme, $0) }
                }
            }
        }
        guard let listening else {
            process.terminate()
            throw ServerFailure(output: String(decoding: buffer, as: UTF8.self))
        }
        self.scheme = listening.scheme
        self.port = listening.port
        output = buffer
        // Weakly: the reader must not keep the harness alive, or its deinit (which kills the
        // server) never runs and the process outlives the test.
        Thread.detachNewThread { [weak self] in
            while true {
                let chunk = reader.availableData
                guard !chunk.isEmpty, let self else { return }
                self.lock.withLock { self.output.append(chunk) }
            }
        }
    }

    /// Everything the server printed so far.
    var log: String { String(decoding: lock.withLock { output }, as: UTF8.self) }

    /// Kills the process with `signal` and waits for it.
    func stop(_ signal: Int32 = SIGTERM) {
        guard process.isRunning else { return }
        kill(process.processIdentifier, signal)
        process.waitUntilExit()
    }

    deinit { stop(SIGKILL) }
}

struct ServerFailure: Error, CustomStringConvertible {
    let output: String
    var description: String { "the server did not start:\n\(output)" }
}

/// A raw HTTP request, for what a well-behaved client never sends.
func raw(
    _ server: ServerProcess, _ path: String, method: String = "POST", body: Data? = nil, token: String?,
    headers: [String: String] = [:]
) async throws -> (status: Int, body: String) {
    var request = URLRequest(url: server.baseURL.appendingPathComponent(path))
    request.httpMethod = method
    request.httpBody = body
    request.setValue("application/json", forHTTPHeaderField: "Content-Type")
    if let token { request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization") }
    for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
    let (data, response) = try await URLSession.shared.data(for: request)
    return ((response as? HTTPURLResponse)?.statusCode ?? 0, String(decoding: data, as: UTF8.self))
}

/// Runs a program found on the path (`arguments[0]`) and returns its exit status and its output
/// (standard output and error together).
func command(_ arguments: [String]) throws -> (status: Int32, output: String) {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = arguments
    let pipe = Pipe()
    process.standardOutput = pipe
    process.standardError = pipe
    try process.run()
    let data = pipe.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return (process.terminationStatus, String(decoding: data, as: UTF8.self))
}

/// A server's change stream as curl reads it off the socket, into a file the test reads while it
/// runs: a test waits for what it expects instead of guessing how long the stream must stay open.
final class StreamCapture: @unchecked Sendable {
    // Safety: `process` is started in `init` and then only terminated and waited for; the file is
    // read by path.
    private let process = Process()
    private let file: URL

    /// Starts curl on `url` with these request headers, writing into a new file in `directory`.
    init(_ url: String, headers: [String], in directory: URL) throws {
        file = directory.appendingPathComponent("stream-\(UUID().uuidString.prefix(8))")
        try Data().write(to: file)
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments =
            ["curl", "-sN", "--max-time", "120", "-o", file.path] + headers.flatMap { ["-H", $0] } + [url]
        try process.run()
    }

    /// What the stream carried so far.
    var text: String { (try? String(contentsOf: file, encoding: .utf8)) ?? "" }

    /// Whether the server opened the stream: its listener is registered by then.
    var isOpen: Bool { text.contains(": open") }

    /// The `data:` lines so far, without the prefix.
    var data: [String] {
        text.split(separator: "\n").filter { $0.hasPrefix("data:") }.map {
            $0.dropFirst(5).trimmingCharacters(in: .whitespaces)
        }
    }

    /// Stops curl and returns everything the stream carried. A kill, since a process the test
    /// runner starts may not act on SIGTERM (curl then reads on until its own time limit).
    @discardableResult
    func stop() -> String {
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
        return text
    }

    deinit { if process.isRunning { kill(process.processIdentifier, SIGKILL) } }
}

/// Waits up to `seconds` for `condition`.
func eventually(_ seconds: Double = 15, _ condition: () throws -> Bool) async throws -> Bool {
    let deadline = Date().addingTimeInterval(seconds)
    while Date() < deadline {
        if try condition() { return true }
        try await Task.sleep(for: .milliseconds(50))
    }
    return try condition()
}

/// Waits up to `seconds` until `value` has stayed the same for `quiet` while every engine of
/// `engines` was idle: the rounds a test's steps started have ended, however long a busy machine
/// makes them take. Returns whether it settled.
func settled<Value: Equatable>(
    _ seconds: Double = 30, quiet: Duration = .milliseconds(800), idle engines: [SyncEngine] = [],
    _ value: () throws -> Value
) async throws -> Bool {
    let clock = ContinuousClock()
    let deadline = clock.now + .milliseconds(Int64(seconds * 1000))
    var last = try value()
    var since = clock.now
    while clock.now < deadline {
        try await Task.sleep(for: .milliseconds(50))
        let current = try value()
        if current != last || engines.contains(where: { $0.status.phase != .idle }) {
            (last, since) = (current, clock.now)
        } else if clock.now - since >= quiet {
            return true
        }
    }
    return false
}

extension HTTPSyncTransport {
    /// The session of `replica` with the server, as an engine makes it: a first hello learns the
    /// server's schema digest, the second sends it.
    func session(replica: String) async throws -> SyncSession {
        let probe = try await hello(SyncHello(replica: replica, schemaVersion: "1", schemaFingerprint: "x"))
        let reply = try await hello(
            SyncHello(replica: replica, schemaVersion: "1", schemaFingerprint: probe.schemaFingerprint))
        return SyncSession(remote: reply.remote, schemaFingerprint: reply.schemaFingerprint)
    }

    /// Pulls every page for `replica` in `session`, so that the server knows where it stands, and
    /// returns where that is.
    @discardableResult
    func pullToEnd(replica: String, session: SyncSession) async throws -> SyncCursor {
        var cursor = SyncCursor.start
        while true {
            let page = try await pull(SyncPullRequest(replica: replica, cursor: cursor, limit: 1000, session: session))
            cursor = page.cursor
            if !page.hasMore { return cursor }
        }
    }
}
