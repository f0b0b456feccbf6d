import Foundation
import HTTPTypes
import Hummingbird
import Logging
import ModelStore
import ModelStorePostgreSQL
import ModelStoreSync
import ModelStoreSyncRequests
import NIOCore
import NIOPosix

/// The sync routes over one shared store, for any Hummingbird app to mount: `POST hello`, `push`,
/// `pull` and `fetch` take the sync engine's JSON messages; `GET changes` is a stream of
/// server-sent events, one each time the store changes; `GET schema` is the store's schema, for a
/// new replica.
///
/// ```swift
/// let server = SyncServer(host: try SyncHost(container: shared, scope: scope), verifier: verifier)
/// let router = Router()
/// server.addRoutes(to: router.group("sync"))
/// ```
///
/// Every request needs a bearer token the ``SyncTokenVerifier`` accepts; its subject and claims
/// decide, through the host's ``ModelStoreSync/SyncScope``, which models the client reads and may
/// change. The server keeps no state between requests: several processes can serve one store.
/// Push, pull and fetch must carry the schema digest of the client's hello
/// (``ModelStoreSync/HTTPSyncTransport/schemaHeader``) and are refused (409) when it is not the
/// server's. Requests too large, malformed or naming what the schema does not have are refused
/// with a 4xx answer and nothing stored; no answer or log line quotes a token or a stored value.
///
/// Changes travel packed where the client reads that form: every answer carries
/// `ModelStore-Sync-Forms: packed` (``ModelStoreSync/HTTPSyncTransport/formsHeader``), which tells
/// a client that the server reads packed pushes; a request with the same header gets its pull
/// reply, its push's pulled page and its change stream's carried pages packed, and a request
/// without it (an older client) JSON arrays. A push is read in either form, within the same
/// limits, and a malformed blob is refused 400 like any malformed body.
/// ``SyncServerConfiguration/packedChanges`` turns the form off.
public struct SyncServer: Sendable {
    /// The sync host every request goes to.
    public let host: SyncHost
    /// The limits.
    public let configuration: SyncServerConfiguration
    private let verifier: SyncTokenVerifier
    private let changeSignal: (any SyncChangeSignal)?
    private let feed: SyncChangeFeed
    private let limiter: SyncRateLimiter
    /// Replicas' owners already confirmed, so a request of a known pair reads nothing.
    private let owners = LockedValue<[String: String]>([:])
    private let fingerprint: String
    private let schema: Schema.Description
    /// Reads and checks request bodies before anything reaches the store.
    let decoder: SyncRequestDecoder
    /// The threads the host's blocking work runs on.
    private let threads: SyncBlockingThreads
    /// The host's store when it is a PostgreSQL store, whose commit counts a push's log line shows.
    private let postgreSQL: PostgreSQLStore?
    /// ``ModelStoreSync/HTTPSyncTransport/formsHeader``.
    private static let formsField = HTTPField.Name(HTTPSyncTransport.formsHeader)!

    /// A server for `host`, admitting requests whose token `verifier` accepts; `changeSignal`, when
    /// given, announces each applied push to every process on the store and wakes this one's live
    /// channel when another announces (``PostgreSQLChangeSignal`` for PostgreSQL), so that changes
    /// reach other processes' clients without waiting for the poll.
    public init(
        host: SyncHost, verifier: SyncTokenVerifier, configuration: SyncServerConfiguration = .init(),
        changeSignal: (any SyncChangeSignal)? = nil
    ) {
        self.host = host
        self.verifier = verifier
        self.configuration = configuration
        let postgreSQL = host.container.stores.first as? PostgreSQLStore
        postgreSQL?.groupsCommits = configuration.groupCommit
        self.postgreSQL = postgreSQL
        self.changeSignal = changeSignal
        let threads = SyncBlockingThreads(count: configuration.blockingThreads)
        self.threads = threads
        self.limiter = SyncRateLimiter(rate: configuration.requestsPerSecond, burst: configuration.requestBurst)
        let schema = host.container.schema
        let probe = #"{"replica":"","schemaVersion":"","schemaFingerprint":""}"#
        let hello = (try? JSONDecoder().decode(SyncHello.self, from: Data(probe.utf8))).flatMap { try? host.hello($0) }
        self.fingerprint = hello?.schemaFingerprint ?? ""
        self.feed = SyncChangeFeed(
            host: host, interval: configuration.changePollInterval, gap: configuration.minimumChangeReadGap,
            keepAlive: configuration.keepAliveInterval, signal: changeSignal, threads: threads,
            remote: hello?.remote ?? "", fingerprint: hello?.schemaFingerprint ?? "",
            maximumBytes: configuration.maximumCarriedBytes)
        let description = schema.storedDescription
        self.schema = Schema.Description(
            version: description.version,
            entities: description.entities.filter { !SyncMetadata.isMetadata($0.name) })
        self.decoder = SyncRequestDecoder(
            schema: schema,
            limits: .init(
                maximumChangesPerPush: configuration.maximumChangesPerPush,
                maximumFetchIdentifiers: configuration.maximumFetchIdentifiers,
                maximumIdentifierLength: configuration.maximumIdentifierLength))
    }

    /// Adds the sync routes to `router` (a router or a group under a path such as `sync`).
    public func addRoutes<Context: RequestContext>(to router: some RouterMethods<Context>) {
        router.post("hello") { request, context in
            try await handle("hello", request, context, checkSchema: false) { (hello: SyncHello, access) in
                try decoder.validate(hello)
                try await checkOwner(of: hello.replica, access: access, path: "hello")
                return try await run { try host.hello(hello) }
            }
        }
        router.post("push") { request, context in
            try await handle("push", request, context) { (push: SyncPushRequest, access) in
                try decoder.validate(push)
                try await checkOwner(of: push.replica, access: access, path: "push")
                context.logger.info("push", metadata: ["changes": "\(push.changes.count)"])
                // The pull the push carries is read after the change is announced, so other
                // processes' clients hear of it without waiting for this client's pull.
                var stored = push
                stored.pull = nil
                let changes = stored
                var reply = try await run { try host.push(changes, access: access) }
                if reply.applied, !push.changes.isEmpty { await changeSignal?.announce() }
                if reply.applied, var pull = push.pull {
                    pull.replica = push.replica
                    pull.session = push.session
                    pull.limit = min(max(1, pull.limit), configuration.maximumPullLimit)
                    let page = pull
                    // Stored already: a failed pull leaves the answer out, and the client pulls itself.
                    reply.pulled = try? await run { try host.pull(page, access: access) }
                    if let pulled = reply.pulled { feed.note(replica: push.replica, cursor: pulled.cursor) }
                }
                return reply
            }
        }
        router.post("pull") { request, context in
            try await handle("pull", request, context) { (pull: SyncPullRequest, access) in
                var page = pull
                try decoder.validate(page)
                try await checkOwner(of: page.replica, access: access, path: "pull")
                page.limit = min(max(1, page.limit), configuration.maximumPullLimit)
                let request = page
                let reply = try await run { try host.pull(request, access: access) }
                feed.note(replica: request.replica, cursor: reply.cursor)
                return reply
            }
        }
        router.post("fetch") { request, context in
            try await handle("fetch", request, context) { (fetch: SyncFetchRequest, access) in
                try decoder.validate(fetch)
                return try await run { try host.fetch(fetch, access: access) }
            }
        }
        router.get("schema") { request, context in
            do {
                _ = try await authenticate(request)
                return try json(schema, packed: false)
            } catch {
                return try failure(error, path: "schema", request: request, context: context)
            }
        }
        router.get("changes") { request, context in
            let access: SyncAccess
            let carry: SyncChangeFeed.Carry?
            do {
                access = try await authenticate(request)
                carry = try await carrying(request, access: access)
            } catch {
                return try failure(error, path: "changes", request: request, context: context)
            }
            let events = feed.listen(access: access, carry: carry)
            var headers = HTTPFields()
            headers[.contentType] = "text/event-stream"
            headers[.cacheControl] = "no-store"
            if configuration.packedChanges { headers[Self.formsField] = HTTPSyncTransport.packedForm }
            return Response(
                status: .ok, headers: headers,
                body: ResponseBody { writer in
                    try await writer.write(ByteBuffer(string: "retry: 1000\n: open\n\n"))
                    for await event in events {
                        switch event {
                        case .change(let transaction):
                            try await writer.write(ByteBuffer(string: "event: change\ndata: \(transaction)\n\n"))
                        case .carried(let announcement):
                            try await writer.write(ByteBuffer(string: "event: change\ndata: \(announcement)\n\n"))
                        case .keepAlive:
                            try await writer.write(ByteBuffer(string: ": keep-alive\n\n"))
                        }
                    }
                    try await writer.finish(nil)
                })
        }
    }

    // MARK: Handling

    private func handle<Message: Decodable & Sendable, Reply: Encodable>(
        _ path: String, _ request: Request, _ context: some RequestContext, checkSchema: Bool = true,
        _ body: (Message, SyncAccess) async throws -> Reply
    ) async throws -> Response {
        let started = ContinuousClock.now
        let timing = SyncRequestTiming()
        var forms = Forms(reply: asksPacked(request))
        do {
            let access = try await authenticate(request)
            if checkSchema { try self.checkSchema(request, path: path) }
            let message: Message = try await decode(request, path: path, packed: &forms.body)
            let reply = try await SyncRequestTiming.$current.withValue(timing) { try await body(message, access) }
            let response = try json(reply, packed: forms.reply)
            log(path, status: response.status, since: started, context: context, timing: timing, forms: forms)
            return response
        } catch {
            forms.reply = false  // an error's body holds no change set
            return try failure(
                error, path: path, request: request, context: context, since: started, timing: timing, forms: forms)
        }
    }

    /// The forms of change sets a request's body was in and its reply is written in, for its log line.
    private struct Forms {
        var reply: Bool
        var body = false

        /// `body`, `reply`, `body+reply`, or `nil` for arrays both ways.
        var packed: String? {
            switch (body, reply) {
            case (true, true): "body+reply"
            case (true, false): "body"
            case (false, true): "reply"
            case (false, false): nil
            }
        }
    }

    /// Whether the request asks for packed replies (and the server writes them).
    private func asksPacked(_ request: Request) -> Bool {
        configuration.packedChanges && HTTPSyncTransport.namesPackedForm(request.headers[Self.formsField])
    }

    private func failure(
        _ error: any Error, path: String, request: Request, context: some RequestContext,
        since started: ContinuousClock.Instant = .now, timing: SyncRequestTiming? = nil, forms: Forms? = nil
    ) throws -> Response {
        let failure = SyncServerFailure.from(error, path: path)
        if failure.status.code >= 500 {
            // The error's type and code only: its message may quote stored values.
            context.logger.error(
                "sync request failed",
                metadata: ["path": "\(path)", "error": "\(Self.redacted(error))"])
        }
        log(
            path, status: failure.status, since: started, context: context, code: failure.code, timing: timing,
            forms: forms)
        var response = try failure.response(from: request, context: context)
        if configuration.packedChanges { response.headers[Self.formsField] = HTTPSyncTransport.packedForm }
        return response
    }

    private func log(
        _ path: String, status: HTTPResponse.Status, since started: ContinuousClock.Instant,
        context: some RequestContext, code: String? = nil, timing: SyncRequestTiming? = nil, forms: Forms? = nil
    ) {
        var metadata: Logger.Metadata = [
            "path": "\(path)", "status": "\(status.code)",
            "ms": "\(Self.milliseconds(ContinuousClock.now - started))",
        ]
        if let code { metadata["refusal"] = "\(code)" }
        // Which way change sets went packed: the body a push arrived in, and a pull's or push's reply.
        if ["push", "pull"].contains(path), let packed = forms?.packed { metadata["packed"] = "\(packed)" }
        // Where the time went: waiting for a thread for the store's blocking work, and that work.
        if let totals = timing?.totals, totals.working > .zero {
            metadata["queued_ms"] = "\(Self.milliseconds(totals.queued))"
            metadata["store_ms"] = "\(Self.milliseconds(totals.working))"
        }
        // The store's saves so far and the transactions that committed them: fewer transactions
        // than saves when pushes were committed together (``SyncServerConfiguration/groupCommit``).
        if path == "push", let counts = postgreSQL?.commitCounts {
            metadata["store_saves"] = "\(counts.saves)"
            metadata["store_commits"] = "\(counts.transactions)"
        }
        context.logger.info("sync request", metadata: metadata)
    }

    private static func milliseconds(_ duration: Duration) -> Int64 {
        duration.components.seconds * 1000 + duration.components.attoseconds / 1_000_000_000_000_000
    }

    /// An error described without its message: type and code.
    static func redacted(_ error: any Error) -> String {
        if let error = error as? SyncError {
            return "SyncError(\(error.code))" + (error.underlyingError.map { " over " + redacted($0) } ?? "")
        }
        if let error = error as? DataStoreError { return "DataStoreError(\(error.code))" }
        return String(describing: type(of: error))
    }

    private func authenticate(_ request: Request) async throws -> SyncAccess {
        guard let header = request.headers[.authorization] else {
            throw SyncServerFailure.unauthorized("the request has no bearer token")
        }
        let parts = header.split(separator: " ", maxSplits: 1)
        guard parts.count == 2, parts[0].lowercased() == "bearer", !parts[1].isEmpty else {
            throw SyncServerFailure.unauthorized("the Authorization header is not 'Bearer TOKEN'")
        }
        guard parts[1].utf8.count <= 16_384 else {
            throw SyncServerFailure.unauthorized("the bearer token is longer than 16 KiB")
        }
        let access = try await verifier.access(for: String(parts[1]))
        if let wait = limiter.take(access.subject ?? "") {
            throw SyncServerFailure(
                .tooManyRequests, code: "rateLimited",
                "the client makes more than \(Int(configuration.requestsPerSecond)) requests a second",
                remedy: "Retry after \(wait) s", retryAfter: wait)
        }
        return access
    }

    /// Refuses (403 `replicaNotOwned`) a request that names a replica another subject owns: the
    /// first request naming a replica records its token's subject as the owner, in the shared
    /// store, so every server process refuses the others. The message names the replica and the
    /// request, never a token or a subject.
    private func checkOwner(of replica: String, access: SyncAccess, path: String) async throws {
        guard let subject = access.subject, host.recordsReplicaOwners else { return }
        if owners.withLock({ $0[replica] }) == subject { return }
        let owner = try await run { try host.owner(ofReplica: replica, claimingFor: subject) }
        guard owner == subject else {
            throw SyncServerFailure(
                .forbidden, code: "replicaNotOwned",
                "the '\(path)' request names the replica '\(SyncRequestDecoder.quoted(replica))', which another user's "
                    + "token first synced; a replica syncs only with its owner's tokens",
                remedy: "Sync this store with a token of the user who first synced it; a store of another user "
                    + "syncs as a replica of its own (a new local store gets a new replica name); nothing was stored")
        }
        owners.withLock { owners in
            if owners.count > 100_000 { owners.removeAll() }  // bounded memory; a miss only reads the store
            owners[replica] = subject
        }
    }

    /// What a change stream's query asks for: `carry=1&replica=R[&limit=N]` makes its announcements
    /// carry the changes the replica `R` (which the token's subject must own) may read, in pages of
    /// at most `N` models (and ``SyncServerConfiguration/maximumPullLimit``); without `carry=1`
    /// (older clients) they carry the number alone.
    private func carrying(_ request: Request, access: SyncAccess) async throws -> SyncChangeFeed.Carry? {
        let query = request.uri.queryParameters
        guard query.get("carry") == "1" else { return nil }
        guard let replica = query.get("replica") else {
            throw SyncServerFailure(
                .badRequest, code: "badRequest", "the 'changes' request asks to carry changes but names no replica",
                remedy: "Add 'replica=NAME' to the query, as HTTPSyncTransport does, or leave out 'carry=1'")
        }
        try decoder.validateIdentifier(replica, "replica", path: "changes")
        var limit = configuration.maximumPullLimit
        if let text = query.get("limit") {
            guard let asked = Int(text) else {
                throw SyncServerFailure(
                    .badRequest, code: "badRequest", "the 'changes' request's 'limit' is not a whole number",
                    remedy: "Send the page size as digits, such as 'limit=1000', or leave it out")
            }
            limit = min(max(1, asked), limit)
        }
        try await checkOwner(of: replica, access: access, path: "changes")
        return SyncChangeFeed.Carry(replica: replica, limit: limit, packed: asksPacked(request))
    }

    private func checkSchema(_ request: Request, path: String) throws {
        guard let name = HTTPField.Name(HTTPSyncTransport.schemaHeader), let sent = request.headers[name] else {
            throw SyncServerFailure(
                .badRequest, code: "badRequest",
                "the '\(path)' request has no '\(HTTPSyncTransport.schemaHeader)' header",
                remedy: "Send the schema digest of the hello with every request, as HTTPSyncTransport does")
        }
        guard sent == fingerprint else {
            throw SyncServerFailure(
                .conflict, code: "schemaMismatch",
                "the client's schema differs from the server's store (schema version \(schema.version))",
                remedy: "Update the app, or migrate the server's store, so both use the same models; nothing was stored"
            )
        }
    }

    /// The request's message; `packed` says, once the body is read, whether it holds packed changes.
    private func decode<Message: Decodable>(
        _ request: Request, path: String, packed: inout Bool
    ) async throws -> Message {
        let buffer: ByteBuffer
        do {
            buffer = try await request.body.collect(upTo: configuration.maximumRequestBytes)
        } catch let error as HTTPError where error.status == .contentTooLarge {
            throw SyncServerFailure.tooLarge(
                "the '\(path)' request is larger than \(configuration.maximumRequestBytes) bytes",
                remedy: "Send fewer changes per request")
        } catch is NIOTooManyBytesError {
            throw SyncServerFailure.tooLarge(
                "the '\(path)' request is larger than \(configuration.maximumRequestBytes) bytes",
                remedy: "Send fewer changes per request")
        }
        let body = Data(buffer: buffer)
        packed = SyncRequestDecoder.isPacked(body)
        if packed, !configuration.packedChanges {
            // As a server before the packed form refuses it: 400, nothing stored.
            throw SyncRequestRefusal.malformed(
                path, "its changes are in the packed form, which this server is set not to read")
        }
        return try decoder.decode(body, as: Message.self, path: path)
    }

    /// The JSON response for `value`, with a push's changes and a pulled page's models packed when
    /// `packed`.
    private func json(_ value: some Encodable, packed: Bool) throws -> Response {
        var headers = HTTPFields()
        headers[.contentType] = "application/json"
        headers[.cacheControl] = "no-store"
        if configuration.packedChanges { headers[Self.formsField] = HTTPSyncTransport.packedForm }
        let encoder = JSONEncoder()
        if packed { encoder.userInfo[HTTPSyncTransport.packedCodingKey] = true }
        let data = try encoder.encode(value)
        return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: data)))
    }

    /// Runs the host's blocking work on one of the server's threads, off its event loops and the
    /// cooperative pool; the request's timing (if any) gets the wait for the thread and the work.
    private func run<Result: Sendable>(_ work: @escaping @Sendable () throws -> Result) async throws -> Result {
        try await threads.run(work)
    }
}
