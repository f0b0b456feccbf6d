import Foundation
import Hummingbird
import HummingbirdTesting
import ModelStore
import ModelStoreAdapters
import ModelStorePostgreSQL
import Testing

@testable import ModelStoreStudio

/// The server the PostgreSQL tests browse: `MODELSTORE_POSTGRES_URL`, which `scripts/postgres.sh run` sets.
enum StudioPostgreSQLServer {
    static let url = ProcessInfo.processInfo.environment["MODELSTORE_POSTGRES_URL"]
    static let skipMessage: Comment =
        "MODELSTORE_POSTGRES_URL is not set: run 'scripts/postgres.sh run -- swift test --package-path Server'"

    /// A `postgres://` URL of the server in a namespace no other test uses.
    static func freshURL(_ label: String) throws -> String {
        let base = try #require(url)
        let namespace = label + "_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").prefix(16).lowercased()
        return base + (base.contains("?") ? "&" : "?") + "namespace=" + namespace
    }
}

/// The guard that keeps a run meant for a server from passing without one: `scripts/postgres.sh run`
/// sets `MODELSTORE_POSTGRES_REQUIRED=1`, and then the suite below must have its server.
struct StudioPostgreSQLServerRequiredTests {
    @Test func aRunThatRequiresAServerHasOne() {
        guard ProcessInfo.processInfo.environment["MODELSTORE_POSTGRES_REQUIRED"] == "1" else { return }
        #expect(StudioPostgreSQLServer.url != nil, "scripts/postgres.sh started no server")
    }
}

/// The studio's pages over a real PostgreSQL store, through its real router: entity counts
/// estimated from the table's statistics past 10,000 rows and exact on request, a filtered and
/// sorted model list with PostgreSQL's access path and `EXPLAIN`, and keyset paging. (The browser
/// test follows relationships on PostgreSQL, in `scripts/ci-studio.sh`.)
@Suite(.enabled(if: StudioPostgreSQLServer.url != nil, StudioPostgreSQLServer.skipMessage))
struct StudioPostgreSQLTests {
    let token = "test-token-0123456789"
    var cookie: HTTPFields { [.cookie: "modelstore_studio=\(token)"] }

    /// A library of `authors` authors (born 1900 + i % 50) with two books each for the first five, in a
    /// fresh namespace, written through the app's model types; then `deleted` authors deleted again.
    private func library(authors: Int, deleted: Int = 0) throws -> String {
        StoreRegistry.shared.registerPostgreSQLSchemes()
        let url = try StudioPostgreSQLServer.freshURL("studio")
        let container = try ModelContainer(for: Author.self, Book.self, url: url)
        let context = ModelContext(container)
        for index in 0..<authors {
            let author = Author()
            author.name = String(format: "author %05d", index)
            author.born = 1900 + index % 50
            context.insert(author)
            for number in 0..<(index < 5 ? 2 : 0) {
                let book = Book()
                book.title = "Book \(index)-\(number)"
                book.pages = 100 + number
                context.insert(book)
                book.author = author
            }
        }
        try context.save()
        if deleted > 0 {
            let last = String(format: "author %05d", authors - deleted)
            try context.delete(model: Author.self, where: #Predicate { $0.name >= last })
            try context.save()
        }
        return url
    }

    private func withStudio(
        _ url: String, _ body: @escaping @Sendable (StudioStore, any TestClientProtocol) async throws -> Void
    ) async throws {
        let store = try StudioStore(url: url)
        defer { store.close() }
        let application = Application(router: Studio(store: store, token: token).router())
        try await application.test(.router) { client in try await body(store, client) }
    }

    private func page(_ client: some TestClientProtocol, _ uri: String) async throws -> String {
        try await client.execute(uri: uri, method: .get, headers: cookie) { response in
            #expect(response.status == .ok, "GET \(uri): \(String(buffer: response.body))")
            return String(buffer: response.body)
        }
    }

    @Test func estimatesALargeEntityFromItsStatisticsAndCountsItExactlyOnRequest() async throws {
        // The save of 10,050 authors analyzes the table; the 20 deleted afterwards leave the statistics at
        // 10,050 until the server's autovacuum, which may run at any time, refreshes them to 10,030.
        let url = try library(authors: 10_050, deleted: 20)
        try await withStudio(url) { store, client in
            #expect(store.storeTypeName == "PostgreSQLStore")
            let html = try await page(client, "/")
            let estimates = [10_050, 10_030].map {
                "data-count=\"Author\">about \($0.formatted()) <span class=\"muted\">estimated</span>"
            }
            #expect(estimates.contains { html.contains($0) }, "\(html)")
            #expect(html.contains("href=\"/?exact=Author\">count exactly</a>"), "\(html)")
            let password = try #require(URLComponents(string: url)?.password)
            #expect(!html.contains(password), "the page shows the URL's password")
            #expect(html.contains("modelstore:***@"), "\(html)")
            #expect(html.contains("data-count=\"Book\">10<"), "a small table is counted: \(html)")
            let exact = try await page(client, "/?exact=Author")
            #expect(
                exact.contains("data-count=\"Author\">\(10_030.formatted()) <span class=\"muted\">exact</span>"),
                "\(exact)")
        }
    }

    @Test func filtersSortsAndPagesWithPostgreSQLsAccessPathAndPlan() async throws {
        let url = try library(authors: 120)
        try await withStudio(url) { _, client in
            let filter = HTML.component("born >= 1945 && name.contains(\"0\")")
            let html = try await page(client, "/entities/Author?filter=\(filter)&sort=born")
            #expect(html.contains("id=\"explain\""), "\(html)")
            #expect(html.contains("PostgreSQLStore"), "\(html)")
            #expect(html.contains("author 00045"), "\(html)")
            #expect(!html.contains("author 00044<"), "born 1944 is filtered out: \(html)")
            let access = try #require(
                html.range(of: "<dt>access path</dt><dd>").map { html[$0.upperBound...].prefix { $0 != "<" } })
            #expect(!access.isEmpty && access != "not reported by the store", "\(access)")
            // PostgreSQL's own EXPLAIN of the statement the page ran, on the page's table.
            let plan = try #require(
                html.firstMatch(of: /<pre id="plan">([^<]*)<\/pre>/).map { String($0.1) }, "\(html)")
            #expect(plan.contains("Author") && (plan.contains("Scan") || plan.contains("Sort")), "\(plan)")

            // 120 authors, 50 a page: the next page starts where the first ended, keyed on the name.
            let first = try await page(client, "/entities/Author?sort=name")
            #expect(first.contains(">author 00049<") && !first.contains(">author 00050<"), "\(first)")
            let next = try #require(
                first.firstMatch(of: /id="next" href="([^"]+)"/).map {
                    String($0.1).replacingOccurrences(of: "&amp;", with: "&")
                },
                "\(first)")
            let second = try await page(client, next)
            #expect(second.contains(">author 00050<") && !second.contains(">author 00049<"), "\(second)")
            #expect(second.contains("keyset on &#39;name&#39;"), "\(second)")
        }
    }

    @Test func aNamespaceWithoutAStoreIsNotFound() throws {
        StoreRegistry.shared.registerPostgreSQLSchemes()
        let url = try StudioPostgreSQLServer.freshURL("none")
        let error = try #require(throws: StudioError.self) { try StudioStore(url: url) }
        #expect(error.description.contains("no store in the namespace"), "\(error)")
        let password = try #require(URLComponents(string: url)?.password)
        #expect(!error.description.contains(password), "the error shows the password: \(error)")
    }
}
