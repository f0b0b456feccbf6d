import Foundation
import Hummingbird
import HummingbirdTesting
import ModelStore
import ModelStoreAdapters
import ModelStoreSync
import Testing

@testable import ModelStoreStudio

/// A note that two replicas edit, for the conflicts page.
final class Memo: PersistentModel {
    @Attribute var title: String = ""
    @Attribute var body: String = ""

    let persistentBackingData = BackingData()
    init() {}
}

/// The conflicts page: the clashes sync kept in a store, and resolving one from the browser.
@Suite struct StudioConflictsTests {
    let token = "test-token-0123456789"
    var cookie: HTTPFields { [.cookie: "modelstore_studio=\(token)"] }

    /// A local SQLite store in `directory` holding one conflict on `Memo.body`: its replica wrote
    /// "mine", the shared store "theirs", and the remote's value was kept.
    static func storeWithAConflict(in directory: URL) async throws -> String {
        let schema = Schema([Memo.self]).includingSyncMetadata()
        let shared = try SyncHost(
            container: ModelContainer(for: schema, url: "sqlite:" + directory.appending(path: "shared.sqlite").path))
        var remoteWins = SyncConfiguration()
        remoteWins.defaultPolicy = .remoteWins
        let url = "sqlite:" + directory.appending(path: "phone.sqlite").path
        let phone = try ModelContainer(for: schema, url: url)
        let laptop = try ModelContainer(for: schema, url: "sqlite:" + directory.appending(path: "laptop.sqlite").path)
        let phoneSync = try SyncEngine(
            container: phone, transport: InProcessSyncTransport(host: shared), configuration: remoteWins)
        let laptopSync = try SyncEngine(container: laptop, transport: InProcessSyncTransport(host: shared))
        let context = ModelContext(phone)
        let memo = Memo()
        memo.title = "Plan"
        memo.body = "draft"
        context.insert(memo)
        try context.save()
        try await phoneSync.syncNow()
        try await laptopSync.syncNow()
        let onLaptop = ModelContext(laptop)
        try #require(try onLaptop.fetch(FetchDescriptor<Memo>()).first).body = "theirs"
        try onLaptop.save()
        try await laptopSync.syncNow()
        memo.body = "mine"
        try context.save()
        let round = try await phoneSync.syncNow()
        #expect(round.conflicts == 1)
        return url
    }

    /// Posts the form that keeps the local value of conflict `id`; returns the response's status.
    func keepLocal(_ id: String, _ client: some TestClientProtocol) async throws -> HTTPResponse.Status {
        var headers = cookie
        headers[.contentType] = "application/x-www-form-urlencoded"
        return try await client.execute(
            uri: "/conflicts/\(id)/resolve", method: .post, headers: headers,
            body: ByteBuffer(string: "token=\(token)&take=local")
        ) { response in response.status }
    }

    @Test func listsAConflictWithItsModelAndValuesAndResolvesIt() async throws {
        let directory = FileManager.default.temporaryDirectory.appending(path: "studio-conflicts-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let url = try await Self.storeWithAConflict(in: directory)
        let store = try StudioStore(url: url)
        defer { store.close() }
        let studio = Studio(store: store, token: token, allowsWrites: true)
        let application = Application(router: studio.router())
        try await application.test(.router) { client in
            let html = try await client.execute(uri: "/conflicts", method: .get, headers: cookie) { response in
                #expect(response.status == .ok)
                return String(buffer: response.body)
            }
            #expect(html.contains("<code>body</code>"))
            #expect(html.contains("draft") && html.contains("mine") && html.contains("theirs"))
            #expect(html.contains("remoteWins"))
            #expect(html.contains("href=\"/entities/Memo/models/"), "the conflict links to the model")
            let id = try #require(try store.conflicts(includingResolved: false)?.first?.id)

            #expect(try await keepLocal(id, client) == .seeOther)
            #expect(try store.conflicts(includingResolved: false)?.isEmpty == true)
            let memo = try #require(try store.fetch(StoreQuery(entityName: "Memo")).first)
            #expect(memo["body"] == .string("mine"), "the kept value is now the local one")
            let newest = try #require(try store.history(before: nil, limit: 1).first)
            #expect(newest.author == "studio", "the resolution is recorded as the studio's")
            let after = try await client.execute(uri: "/conflicts", method: .get, headers: cookie) { response in
                String(buffer: response.body)
            }
            #expect(after.contains("id=\"no-conflicts\""))
        }
    }

    @Test func aReadOnlyStudioShowsNoFormsAndRefusesToResolve() async throws {
        let directory = FileManager.default.temporaryDirectory.appending(path: "studio-conflicts-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let url = try await Self.storeWithAConflict(in: directory)
        let store = try StudioStore(url: url)
        defer { store.close() }
        let application = Application(router: Studio(store: store, token: token).router())
        try await application.test(.router) { client in
            let html = try await client.execute(uri: "/conflicts", method: .get, headers: cookie) { response in
                String(buffer: response.body)
            }
            #expect(!html.contains("<form"))
            let id = try #require(try store.conflicts(includingResolved: false)?.first?.id)
            #expect(try await keepLocal(id, client) == .forbidden)
            #expect(try store.conflicts(includingResolved: false)?.count == 1)
        }
    }
}
