import Foundation
import ModelStore

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The transport to a sync server over HTTP: each message is posted as JSON to `BASE/hello`,
/// `BASE/push`, `BASE/pull` or `BASE/fetch` with a bearer token, and `BASE/changes` (server-sent
/// events) says when the server's store changed.
///
/// ```swift
/// let transport = HTTPSyncTransport(
///     baseURL: URL(string: "https://sync.example.com/sync")!, token: token)
/// let engine = try SyncEngine(container: local, transport: transport)
/// ```
///
/// Failures map to ``SyncError``: a connection that fails, a timeout, an answer of 429 or of 500
/// and above, and a 409 `remoteChanged` are transient (the engine retries); any other 4xx answer
/// is ``SyncError/Code/refused`` (or ``SyncError/Code/schemaMismatch``) with the server's message.
/// Redirects are not followed, so the token goes only to the address given. The token appears in
/// no error or description.
///
/// A push's changes and a pulled page's models travel packed in one blob, smaller and faster to
/// read than a JSON array, where both sides read that form (see ``formsHeader``): every request
/// asks for packed replies with `ModelStore-Sync-Forms: packed`, which a server that does not read
/// the form ignores, and a push is sent packed only after the server's last answer said it reads
/// the form. Pass `packedChanges: false` to send and ask for JSON arrays only.
public struct HTTPSyncTransport: SyncTransport {
    /// The address the four request paths are under.
    public let baseURL: URL
    /// How long a request may wait for the server's answer.
    public var timeout: TimeInterval
    private let token: String?
    private let session: URLSession
    /// The schema digest of the last hello, sent with every later request so a server can refuse
    /// a replica whose schema differs from its own.
    private let fingerprint = LockedValue<String?>(nil)
    /// Whether the transport asks for packed replies and sends packed pushes to a server that reads them.
    public let packedChanges: Bool
    /// Whether the server's last answer said it reads the packed form (`nil` before the first answer).
    let serverReadsPacked = LockedValue<Bool?>(nil)

    /// A transport to the server at `baseURL`, authenticating with the bearer `token` (`nil` sends
    /// no Authorization header); with `packedChanges` (the default), changes travel packed where
    /// the server reads that form (see ``formsHeader``), and as JSON arrays otherwise.
    public init(baseURL: URL, token: String?, timeout: TimeInterval = 30, packedChanges: Bool = true) {
        self.baseURL = baseURL
        self.token = token
        self.timeout = timeout
        self.packedChanges = packedChanges
        let configuration = URLSessionConfiguration.ephemeral
        configuration.timeoutIntervalForRequest = timeout
        configuration.httpShouldSetCookies = false
        self.session = URLSession(configuration: configuration, delegate: RedirectRefusal(), delegateQueue: nil)
    }

    /// The header that carries the schema digest of the replica's hello.
    public static let schemaHeader = "ModelStore-Schema-Fingerprint"

    /// Posts the hello and remembers its schema digest for the requests that follow.
    public func hello(_ request: SyncHello) async throws -> SyncHelloReply {
        fingerprint.withLock { $0 = request.schemaFingerprint }
        return try await post("hello", request)
    }

    /// Posts local changes: packed when the server's last answer said it reads the packed form,
    /// as a JSON array otherwise, and again as an array when a server that no longer says so
    /// (an older process behind the same address) refuses the packed push as malformed.
    public func push(_ request: SyncPushRequest) async throws -> SyncPushReply {
        try await post("push", request, packed: sendsPacked)
    }

    /// Posts a request for a page of changes.
    public func pull(_ request: SyncPullRequest) async throws -> SyncPullReply {
        try await post("pull", request)
    }

    /// Posts a request for models by global identifier.
    public func fetch(_ request: SyncFetchRequest) async throws -> [SyncModelState] {
        try await post("fetch", request)
    }

    /// A signal for each change the server announces on `BASE/changes`, and one after each
    /// reconnection (changes may have happened while the stream was down). The stream reconnects
    /// after a failure with growing waits, up to 30 s, until the consumer stops listening.
    public func remoteChanges() -> AsyncStream<Void>? {
        guard let numbers = remoteTransactions() else { return nil }
        return AsyncStream(bufferingPolicy: .bufferingNewest(1)) { continuation in
            let task = Task {
                for await _ in numbers { continuation.yield() }
                continuation.finish()
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }

    /// The signals of ``remoteChanges()`` with the transaction number each event carries (`nil`
    /// for the signal after a reconnection).
    public func remoteTransactions() -> AsyncStream<Int64?>? {
        let events = announcements(carrying: nil)
        return AsyncStream(bufferingPolicy: .bufferingNewest(1)) { continuation in
            let task = Task {
                for await announcement in events { continuation.yield(announcement.transaction) }
                continuation.finish()
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }

    /// The announcements on `BASE/changes?carry=1&replica=R&limit=N`: a server of this version or
    /// later sends each with the changes `replica` may read since where its pulls left it, in a
    /// page of at most `pageSize` models, when it knows that place and the page is whole (see
    /// ``SyncCarriedChanges``); an older server ignores the query and announces numbers only.
    /// The stream reconnects as ``remoteChanges()`` does.
    public func remoteAnnouncements(replica: String, pageSize: Int) -> AsyncStream<SyncAnnouncement>? {
        announcements(carrying: (replica, max(1, pageSize)))
    }

    private func announcements(carrying: (replica: String, limit: Int)?) -> AsyncStream<SyncAnnouncement> {
        // Pages that carry changes are kept (each needs the one before it); numbers alone fold.
        AsyncStream(bufferingPolicy: .bufferingNewest(carrying == nil ? 1 : 64)) { continuation in
            let task = Task {
                var failures = 0
                while !Task.isCancelled {
                    var request = makeRequest("changes", method: "GET", body: nil)
                    if let carrying, let url = request.url,
                        var parts = URLComponents(url: url, resolvingAgainstBaseURL: false)
                    {
                        parts.queryItems = [
                            URLQueryItem(name: "carry", value: "1"),
                            URLQueryItem(name: "replica", value: carrying.replica),
                            URLQueryItem(name: "limit", value: "\(carrying.limit)"),
                        ]
                        request.url = parts.url ?? url
                    }
                    let opened = await EventStream.run(request) { continuation.yield($0) }
                    if Task.isCancelled { break }
                    failures = opened ? 1 : failures + 1
                    let wait = min(30, 0.25 * pow(2, Double(min(failures, 8))))
                    try? await Task.sleep(for: .milliseconds(Int(wait * 1000)))
                }
                continuation.finish()
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }

    /// Reads the server's schema (`GET BASE/schema`), so a new replica can create its store.
    public func schema() async throws -> Schema.Description {
        try await send(makeRequest("schema", method: "GET", body: nil), path: "schema")
    }

    // MARK: Requests

    private func makeRequest(_ path: String, method: String, body: Data?) -> URLRequest {
        var request = URLRequest(url: baseURL.appendingPathComponent(path))
        request.httpMethod = method
        request.timeoutInterval = timeout
        request.httpBody = body
        if body != nil { request.setValue("application/json", forHTTPHeaderField: "Content-Type") }
        request.setValue("application/json", forHTTPHeaderField: "Accept")
        if packedChanges { request.setValue(Self.packedForm, forHTTPHeaderField: Self.formsHeader) }
        if let token { request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization") }
        if let fingerprint = fingerprint.withLock({ $0 }) {
            request.setValue(fingerprint, forHTTPHeaderField: Self.schemaHeader)
        }
        return request
    }

    private func post<Request: Encodable, Reply: Decodable>(
        _ path: String, _ message: Request, packed: Bool = false
    ) async throws -> Reply {
        let body: Data
        do {
            let encoder = JSONEncoder()
            if packed { encoder.userInfo[Self.packedCodingKey] = true }
            body = try encoder.encode(message)
        } catch {
            throw SyncError(.refused, "the '\(path)' request could not be encoded as JSON", underlyingError: error)
        }
        let (data, http) = try await exchange(makeRequest(path, method: "POST", body: body), path: path)
        // A server that does not read the packed form finds no array in the body and refuses it
        // (400) without storing anything; its answer does not say it reads the form, so the
        // transport has noted that, and the same message goes again as arrays.
        if packed, http.statusCode == 400, !Self.readsPacked(http) {
            return try await post(path, message, packed: false)
        }
        return try reply(data, http, path: path)
    }

    private func send<Reply: Decodable>(_ request: URLRequest, path: String) async throws -> Reply {
        let (data, http) = try await exchange(request, path: path)
        return try reply(data, http, path: path)
    }

    /// Sends `request` and returns the server's answer, whatever its status, after noting whether
    /// it says the server reads the packed form.
    private func exchange(_ request: URLRequest, path: String) async throws -> (Data, HTTPURLResponse) {
        let data: Data
        let response: URLResponse
        do {
            (data, response) = try await session.data(for: request)
        } catch {
            throw SyncError(
                .unreachable, "the sync server at '\(Self.describe(baseURL))' did not answer the '\(path)' request",
                remedy: "The engine retries; check the address and the network", isTransient: true,
                underlyingError: Self.networkFailure(error))
        }
        guard let http = response as? HTTPURLResponse else {
            throw SyncError(.unreachable, "'\(Self.describe(baseURL))' did not answer over HTTP", isTransient: true)
        }
        serverReadsPacked.withLock { $0 = Self.readsPacked(http) }
        return (data, http)
    }

    /// The reply in a 2xx answer, or the error for any other.
    private func reply<Reply: Decodable>(_ data: Data, _ http: HTTPURLResponse, path: String) throws -> Reply {
        guard (200..<300).contains(http.statusCode) else {
            throw Self.failure(status: http.statusCode, body: data, path: path, url: baseURL, response: http)
        }
        do {
            return try JSONDecoder().decode(Reply.self, from: data)
        } catch {
            throw SyncError(
                .refused,
                "the sync server at '\(Self.describe(baseURL))' answered the '\(path)' request with a body "
                    + "that is not a sync reply",
                remedy: "Check that the address names a ModelStore sync server of this version")
        }
    }

    /// The error for a non-2xx answer, with the server's message when it sent one.
    static func failure(
        status: Int, body: Data, path: String, url: URL, response: HTTPURLResponse
    ) -> SyncError {
        let sent = try? JSONDecoder().decode(ServerFailure.self, from: body)
        let message = sent?.message ?? "the sync server answered \(status) to the '\(path)' request"
        let at = "'\(describe(url))'"
        switch status {
        case 429, 503:
            let wait = response.value(forHTTPHeaderField: "Retry-After").flatMap(Int.init)
            let remedy = wait.map { "The engine retries; the server asks to wait \($0) s" } ?? "The engine retries"
            return SyncError(.busy, "\(message) (\(status) from \(at))", remedy: remedy, isTransient: true)
        case 500...:
            return SyncError(
                .unreachable, "\(message) (\(status) from \(at))", remedy: "The engine retries", isTransient: true)
        case 409 where sent?.code == SyncError.Code.remoteChanged.name:
            return SyncError(
                .remoteChanged, "\(message) (\(status) from \(at))", remedy: sent?.remedy ?? "The engine retries",
                isTransient: true)
        default:
            let code: SyncError.Code = sent?.code == SyncError.Code.schemaMismatch.name ? .schemaMismatch : .refused
            let remedy =
                sent?.remedy
                ?? (status == 401 ? "Pass a valid token (--token-file, or MODELSTORE_SYNC_TOKEN)" : nil)
            return SyncError(code, "\(message) (\(status) from \(at))", remedy: remedy)
        }
    }

    /// The URL without user, password, query or fragment, for messages.
    static func describe(_ url: URL) -> String {
        guard var parts = URLComponents(url: url, resolvingAgainstBaseURL: false) else { return "the server" }
        parts.user = nil
        parts.password = nil
        parts.query = nil
        parts.fragment = nil
        return parts.string ?? "the server"
    }

    /// A network error reduced to what is safe to show: its code and description, never the request.
    private static func networkFailure(_ error: any Error) -> any Error & Sendable {
        let failure = error as NSError
        return NetworkFailure(domain: failure.domain, code: failure.code, summary: failure.localizedDescription)
    }
}

/// The body a sync server sends with an error: `{"code": …, "message": …, "remedy": …}`.
struct ServerFailure: Codable {
    var code: String
    var message: String
    var remedy: String?
}

/// Why a request did not reach the server.
struct NetworkFailure: Error, Sendable, CustomStringConvertible {
    let domain: String
    let code: Int
    let summary: String
    var description: String { "\(summary) [\(domain) \(code)]" }
}

/// Refuses redirects, so the bearer token is sent only to the address the transport was given.
private final class RedirectRefusal: NSObject, URLSessionTaskDelegate, Sendable {
    func urlSession(
        _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
        newRequest request: URLRequest, completionHandler: @escaping @Sendable (URLRequest?) -> Void
    ) {
        completionHandler(nil)
    }
}
