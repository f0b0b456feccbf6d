import Foundation
import Hummingbird
import ModelStore
import ModelStoreSync
import ServiceLifecycle

/// ModelStore Studio: a store browser served over HTTP, as a router an app or a test can mount and
/// as an application ``run(host:port:onRunning:)`` serves.
///
/// Every page needs the access token (``token``): in the address the studio prints, then in a
/// cookie. The studio writes only when ``allowsWrites`` is set, and then as author `studio`.
public final class Studio: Sendable {
    /// The store browsed.
    public let store: StudioStore
    /// The access token every request must carry.
    public let token: String
    /// Whether edits and deletes are allowed.
    public let allowsWrites: Bool
    let watcher: ChangeWatcher

    /// A studio over an opened store; `token` defaults to a new random one.
    public init(store: StudioStore, token: String = Studio.randomToken(), allowsWrites: Bool = false) {
        self.store = store
        self.token = token
        self.allowsWrites = allowsWrites
        watcher = ChangeWatcher(store: store)
    }

    /// 32 random bytes as hexadecimal, from the system's random source.
    public static func randomToken() -> String {
        var generator = SystemRandomNumberGenerator()
        return (0..<32).map { _ in String(format: "%02x", UInt8.random(in: .min ... .max, using: &generator)) }.joined()
    }

    /// The address to open in a browser, with the token.
    public func address(host: String, port: Int) -> String {
        let shownHost = host.contains(":") ? "[\(host)]" : host
        return "http://\(shownHost):\(port)/?token=\(token)"
    }

    /// The router serving the studio's pages behind the access token.
    public func router() -> Router<BasicRequestContext> {
        let router = Router()
        router.add(middleware: AccessTokenMiddleware(token: token))
        router.get("/") { request, _ in
            try self.html("Entities") {
                try EntityListPage(
                    store: self.store, exactCountOf: Self.query(request).fields["exact"]
                )
                .render()
            }
        }
        router.get("/entities/:entity") { request, context in
            let name = try context.parameters.require("entity")
            return try self.html(name) {
                let query = Self.query(request).fields
                return try ModelListPage(
                    store: self.store, entity: try self.store.entity(named: name),
                    filterText: query["filter"] ?? "",
                    sortProperty: query["sort"].flatMap { $0.isEmpty ? nil : $0 },
                    descending: query["order"] == "desc", cursorToken: query["after"],
                    countsExactly: query["count"] == "exact",
                    className: query["class"].flatMap { $0.isEmpty ? nil : $0 }
                ).render()
            }
        }
        router.get("/entities/:entity/models/:key") { request, context in
            try self.html(try context.parameters.require("entity")) {
                let id = try self.identifier(context)
                _ = try self.store.entity(named: id.entityName)
                guard let snapshot = try self.store.snapshot(id) else {
                    throw StudioError(
                        .notFound, "the store '\(self.store.url)' has no model '\(id)'",
                        remedy: "It may have been deleted; see the history")
                }
                return try ModelPage(
                    store: self.store, snapshot: snapshot, formToken: self.allowsWrites ? self.token : nil,
                    notice: Self.query(request).fields["notice"]
                ).render()
            }
        }
        router.post("/entities/:entity/models/:key/edit") { request, context in
            let form = try await self.form(request)
            return try self.html("Edit") {
                try self.checkWrite(form, request)
                let id = try self.identifier(context)
                let entity = try self.store.entity(named: id.entityName)
                let name = try form.required("attribute")
                guard let attribute = entity.attribute(named: name) else {
                    throw StudioError(.notFound, "'\(entity.name)' has no attribute '\(name)'")
                }
                let value: StoreValue
                if form.fields["nil"] == "1" {
                    guard attribute.isOptional else {
                        throw StudioError(.badRequest, "'\(entity.name).\(name)' is not optional, so it cannot be nil")
                    }
                    value = .null
                } else {
                    do {
                        value = try ValueText.value(ofText: try form.required("value"), as: attribute.valueType)
                    } catch let failure as ValueText.Failure {
                        throw StudioError(
                            .badRequest, "\(failure.message) for '\(entity.name).\(name)' (\(attribute.valueType))",
                            remedy: "Go back and enter a value of that type")
                    }
                }
                let expected = try ExpectedValues(token: try form.required("expected")).values
                try self.store.update(id, attribute: name, to: value, expected: expected)
                throw Redirect(ModelLink.path(id) + HTML.query([("notice", "Saved '\(name)' as author 'studio'.")]))
            }
        }
        router.post("/entities/:entity/models/:key/delete") { request, context in
            let form = try await self.form(request)
            return try self.html("Delete") {
                try self.checkWrite(form, request)
                let id = try self.identifier(context)
                try self.store.delete(id)
                throw Redirect("/entities/\(HTML.component(id.entityName))")
            }
        }
        router.get("/schema") { _, _ in
            try self.html("Schema") {
                "<h1>Schema</h1><p class=\"muted\">Version \(HTML.escape(self.store.schema.version.description)); "
                    + "◆ unique, ⇲ external storage; an arrow points at a relationship's destination, "
                    + "1 and * give each end's cardinality; a hollow triangle points from a class to its "
                    + "superclass (is a).</p>"
                    + SchemaDiagram(schema: self.store.schema).render()
            }
        }
        router.get("/history") { request, _ in
            try self.html("History") {
                try HistoryPage(
                    store: self.store, before: Self.query(request).fields["before"].flatMap { Int64($0) }
                ).render()
            }
        }
        router.get("/conflicts") { request, _ in
            try self.html("Conflicts") {
                let fields = Self.query(request).fields
                return try ConflictsPage(
                    store: self.store, includingResolved: fields["all"] == "1",
                    formToken: self.allowsWrites ? self.token : nil, notice: fields["notice"]
                ).render()
            }
        }
        router.post("/conflicts/:id/resolve") { request, context in
            let form = try await self.form(request)
            return try self.html("Resolve") {
                try self.checkWrite(form, request)
                let id = try context.parameters.require("id")
                guard let side = SyncConflicts.Side(rawValue: try form.required("take")) else {
                    throw StudioError(.badRequest, "'take' is 'local' or 'remote'")
                }
                do {
                    try self.store.resolveConflict(id, take: side)
                } catch let error as DataStoreError where error.code == .notFound {
                    throw StudioError(.notFound, error.message)
                }
                throw Redirect("/conflicts" + HTML.query([("notice", "Resolved: kept the \(side.rawValue) value.")]))
            }
        }
        router.get("/events") { request, _ in
            // After the transaction the page was rendered at, or after the last one this stream sent
            // when the browser reconnects (it sends the last event's id back).
            let rendered = Self.query(request).fields["after"].flatMap { Int64($0) } ?? 0
            let resumed = request.headers.first { $0.name.canonicalName == "last-event-id" }.flatMap { Int64($0.value) }
            let after = max(rendered, resumed ?? 0)
            StudioDebugLog.write(
                "events: subscribed after \(rendered), resumed after \(resumed.map(String.init) ?? "-")")
            let feed = ChangeFeed(store: self.store, watcher: self.watcher, after: after)
            return Response(
                status: .ok, headers: [.contentType: "text/event-stream", .cacheControl: "no-cache"],
                body: ResponseBody { writer in
                    // Sent at once, so the response's head reaches the browser (which then says the stream
                    // is open) before any change; `retry` is the wait before a reconnection, in ms.
                    try await writer.write(ByteBuffer(string: "retry: 1000\n\n"))
                    // Ends when the server shuts down, which otherwise waits for open streams to end.
                    for try await number in feed.cancelOnGracefulShutdown() {
                        try await writer.write(ByteBuffer(string: "id: \(number)\nevent: change\ndata: \(number)\n\n"))
                        StudioDebugLog.write("events: after \(after) sent \(number)")
                    }
                    try await writer.finish(nil)
                })
        }
        return router
    }

    /// Serves the studio until the task is cancelled; `onRunning` gets the address with the token once
    /// the server listens (the port the system chose, for port 0).
    public func run(host: String, port: Int, onRunning: @escaping @Sendable (String) async -> Void) async throws {
        let application = Application(
            router: router(),
            configuration: .init(address: .hostname(host, port: port), serverName: "modelstore-studio"),
            onServerRunning: { channel in
                await onRunning(self.address(host: host, port: channel.localAddress?.port ?? port))
            })
        defer { watcher.stop() }
        try await application.runService()
    }

    // MARK: Helpers

    /// A redirect thrown from a page's body.
    private struct Redirect: Error {
        let location: String
        init(_ location: String) { self.location = location }
    }

    private func identifier(_ context: BasicRequestContext) throws -> PersistentIdentifier {
        try ModelLink.identifier(
            entity: try context.parameters.require("entity"), key: try context.parameters.require("key"),
            storeIdentifier: store.storeIdentifier)
    }

    /// The query's fields, decoded as a browser encodes a form sent with GET (`+` for a space).
    private static func query(_ request: Request) -> FormBody {
        FormBody(request.uri.query ?? "")
    }

    /// A posted form (at most 1 MiB).
    private func form(_ request: Request) async throws -> FormBody {
        FormBody(String(buffer: try await request.body.collect(upTo: 1 << 20)))
    }

    /// Throws ``StudioError/Kind/forbidden`` unless writes are allowed and the form carries the token
    /// (which a page of another site cannot know).
    private func checkWrite(_ form: FormBody, _ request: Request) throws {
        guard allowsWrites else {
            throw StudioError(
                .forbidden, "the studio is read-only, so '\(request.uri.path)' changed nothing",
                remedy: "Start modelstore-studio with --write to edit and delete")
        }
        guard let given = form.fields["token"], AccessTokenMiddleware<BasicRequestContext>.equal(given, token) else {
            throw StudioError(
                .forbidden, "the form does not carry the access token", remedy: "Submit it from the studio's page")
        }
    }

    /// A page's response: the body in the frame, or the error as a page with its status.
    private func html(_ title: String, _ body: () throws -> String) throws -> Response {
        // Read before the content, so that a change committed while the page is rendered is newer
        // than the number the page subscribes after, and reloads it.
        let renderedAfter = store.keepsHistory ? try? store.newestTransactionNumber() : nil
        let status: HTTPResponse.Status
        let content: String
        do {
            content = try body()
            status = .ok
        } catch let redirect as Redirect {
            return Response(status: .seeOther, headers: [.location: redirect.location])
        } catch {
            let studioError = StudioError.from(error)
            status =
                switch studioError.kind {
                case .notFound: .notFound
                case .badRequest: .badRequest
                case .forbidden: .forbidden
                case .conflict: .conflict
                case .store: .internalServerError
                }
            content =
                "<h1>\(status.code) \(HTML.escape(status.reasonPhrase))</h1><div class=\"error\" id=\"error\">"
                + HTML.escape(studioError.description) + "</div>"
        }
        StudioDebugLog.write("page: \(status.code) rendered at \(renderedAfter.map(String.init) ?? "-")")
        let page = HTML.page(
            title: title, store: store, writes: allowsWrites, live: status == .ok ? renderedAfter ?? 0 : nil,
            body: content)
        return Response(
            status: status, headers: [.contentType: "text/html; charset=utf-8"],
            body: ResponseBody(byteBuffer: ByteBuffer(string: page)))
    }
}
