import Foundation
import Hummingbird
import HummingbirdTesting
import ModelStore
import Testing

@testable import ModelStoreStudio

/// The studio's pages through its real router, with Hummingbird's test client.
@Suite struct StudioRouterTests {
    let token = "test-token-0123456789"
    var cookie: HTTPFields { [.cookie: "modelstore_studio=\(token)"] }

    /// Runs `body` against a studio over a fresh store (a library, unless `making` makes another).
    func withStudio(
        writes: Bool = false, making: () throws -> LibraryFixture = { try LibraryFixture() },
        _ body: @escaping @Sendable (LibraryFixture, StudioStore, any TestClientProtocol) async throws -> Void
    ) async throws {
        let fixture = try making()
        defer { fixture.remove() }
        let store = try StudioStore(url: fixture.url)
        defer { store.close() }
        let studio = Studio(store: store, token: token, allowsWrites: writes)
        let application = Application(router: studio.router())
        try await application.test(.router) { client in try await body(fixture, store, client) }
    }

    func page(
        _ client: some TestClientProtocol, _ uri: String, status: HTTPResponse.Status = .ok
    ) async throws -> String {
        try await client.execute(uri: uri, method: .get, headers: cookie) { response in
            #expect(response.status == status, "GET \(uri)")
            return String(buffer: response.body)
        }
    }

    func post(
        _ client: some TestClientProtocol, _ uri: String, _ fields: [String: String]
    ) async throws -> TestResponse {
        let body = fields.map { "\($0.key)=\(HTML.component($0.value))" }.joined(separator: "&")
        var headers = cookie
        headers[.contentType] = "application/x-www-form-urlencoded"
        return try await client.execute(uri: uri, method: .post, headers: headers, body: ByteBuffer(string: body))
    }

    @Test func refusesRequestsWithoutTheToken() async throws {
        try await withStudio { _, _, client in
            for uri in ["/", "/entities/Author", "/schema", "/history", "/events", "/?token=wrong"] {
                try await client.execute(uri: uri, method: .get) { response in
                    #expect(response.status == .unauthorized, "GET \(uri)")
                    #expect(String(buffer: response.body).contains("access token required"))
                }
            }
        }
    }

    @Test func theTokenInTheAddressSetsACookieAndIsDroppedFromIt() async throws {
        try await withStudio { _, _, client in
            try await client.execute(uri: "/entities/Author?token=\(token)&sort=born", method: .get) { response in
                #expect(response.status == .seeOther)
                #expect(response.headers[.location] == "/entities/Author?sort=born")
                #expect(response.headers[.setCookie]?.contains("modelstore_studio=\(token)") == true)
                #expect(response.headers[.setCookie]?.contains("SameSite=Strict") == true)
            }
        }
    }

    @Test func listsEntitiesWithTheirCounts() async throws {
        try await withStudio { _, _, client in
            let html = try await page(client, "/")
            #expect(html.contains("<a href=\"/entities/Author\">Author</a>"))
            #expect(html.contains("data-count=\"Author\">30<"))
            #expect(html.contains("data-count=\"Book\">10<"))
            let exact = try await page(client, "/?exact=Author")
            #expect(exact.contains("data-count=\"Author\">30 <span class=\"muted\">exact</span>"))
        }
    }

    @Test func filtersAndExplains() async throws {
        try await withStudio { _, _, client in
            let html = try await page(client, "/entities/Author?filter=" + HTML.component("born >= 1925 && active"))
            let names = html.matches(of: /author (\d{3})/).map { Int($0.1)! }
            #expect(Set(names) == Set((0..<30).filter { 1900 + $0 % 50 >= 1925 && $0 % 3 == 0 }))
            #expect(html.contains("id=\"explain\""))
            #expect(html.contains("Author where (born &gt;= 1925 &amp;&amp; active == true) sorted by name ascending"))
            #expect(html.contains("<dt>access path</dt><dd>orderedIndexSort(name)</dd>"))
            // SQLite's own EXPLAIN QUERY PLAN of the statement, naming the index it reads.
            #expect(html.contains("<pre id=\"plan\">"), "\(html)")
            #expect(html.firstMatch(of: /<pre id="plan">[^<]*INDEX[^<]*<\/pre>/) != nil, "\(html)")
            // A browser sends a form's spaces as '+'.
            let submitted = try await page(client, "/entities/Author?filter=born+%3E%3D+1925+%26%26+active")
            #expect(submitted.matches(of: /author (\d{3})/).count == names.count)
            #expect(!submitted.contains("filter-error"))
        }
    }

    @Test func showsWhereAMalformedFilterGoesWrong() async throws {
        try await withStudio { _, _, client in
            let html = try await page(client, "/entities/Author?filter=" + HTML.component("born >= 1925 && nme == 3"))
            #expect(html.contains("id=\"filter-error\""))
            #expect(html.contains("&#39;Author&#39; has no property &#39;nme&#39;"))
            #expect(html.contains("\n" + String(repeating: " ", count: 16) + "^\n"))
            #expect(!html.contains("id=\"explain\""))
        }
    }

    @Test func pagesWithAKeysetCursor() async throws {
        try await withStudio { _, _, client in
            // 30 authors, 50 a page: one page; sorted by born there are ties across the whole list.
            let first = try await page(client, "/entities/Author?sort=born&order=desc")
            #expect(!first.contains("id=\"next\""))
            #expect(first.matches(of: /<tr><td><a href/).count == 30)
            #expect(first.contains("keyset on &#39;born&#39;"))
        }
    }

    @Test func showsAModelWithItsRelationshipsAsLinks() async throws {
        try await withStudio { _, store, client in
            let author = try #require(
                try store.fetch(StoreQuery(entityName: "Author", filter: .equal("name", .string("author 001")))).first)
            let html = try await page(client, ModelLink.path(author.persistentIdentifier))
            #expect(html.contains("author 001"))
            let books = try store.fetch(
                StoreQuery(
                    entityName: "Book", filter: .compare("author", .equal, .reference(author.persistentIdentifier))))
            #expect(books.count == 2)
            for book in books { #expect(html.contains("href=\"\(ModelLink.path(book.persistentIdentifier))\"")) }
            let bookPage = try await page(client, ModelLink.path(books[0].persistentIdentifier))
            #expect(bookPage.contains("href=\"\(ModelLink.path(author.persistentIdentifier))\""))
            _ = try await page(client, "/entities/Author/models/i999999", status: .notFound)
            _ = try await page(client, "/entities/Nope", status: .notFound)
            _ = try await page(client, "/entities/Author/models/x1", status: .badRequest)
        }
    }

    @Test func writesNothingWhenReadOnly() async throws {
        try await withStudio { fixture, store, client in
            let author = try #require(
                try store.fetch(StoreQuery(entityName: "Author", filter: .equal("name", .string("author 003")))).first)
            let html = try await page(client, ModelLink.path(author.persistentIdentifier))
            #expect(!html.contains("<form"))
            let expected = ExpectedValues(author.entity.attributes.map { author.values[$0.slot] }).token
            let path = ModelLink.path(author.persistentIdentifier)
            let edit = try await post(
                client, path + "/edit", ["token": token, "attribute": "born", "value": "1700", "expected": expected])
            #expect(edit.status == .forbidden)
            #expect(String(buffer: edit.body).contains("--write"))
            #expect(try await post(client, path + "/delete", ["token": token]).status == .forbidden)
            #expect(try fixture.born("author 003") == 1903)
            #expect(try store.count(StoreQuery(entityName: "Author")) == 30)
        }
    }

    @Test func editsAndDeletesAsAuthorStudioWithWrites() async throws {
        try await withStudio(writes: true) { fixture, store, client in
            let author = try #require(
                try store.fetch(StoreQuery(entityName: "Author", filter: .equal("name", .string("author 007")))).first)
            let path = ModelLink.path(author.persistentIdentifier)
            let html = try await page(client, path)
            #expect(html.contains("id=\"edit-born\""))
            let expected = ExpectedValues(author.entity.attributes.map { author.values[$0.slot] }).token
            // A value of the wrong type changes nothing.
            let bad = try await post(
                client, path + "/edit", ["token": token, "attribute": "born", "value": "soon", "expected": expected])
            #expect(bad.status == .badRequest)
            #expect(String(buffer: bad.body).contains("&#39;soon&#39; is not a whole number for &#39;Author.born&#39;"))
            // Without the form token, nothing either.
            let forged = try await post(
                client, path + "/edit", ["attribute": "born", "value": "1999", "expected": expected])
            #expect(forged.status == .forbidden)
            let saved = try await post(
                client, path + "/edit", ["token": token, "attribute": "born", "value": "1999", "expected": expected])
            #expect(saved.status == .seeOther)
            #expect(try fixture.born("author 007") == 1999)
            let newest = try #require(try store.history(limit: 1).first)
            #expect(newest.author == "studio")
            let history = try await page(client, "/history")
            #expect(history.contains("author <code>studio</code>"))
            #expect(history.contains("<code>born</code> 1907 → 1999"))
            // Another author's unique name is refused by the store's uniqueness check, as a conflict.
            let edited = try #require(try store.snapshot(author.persistentIdentifier))
            let current = ExpectedValues(author.entity.attributes.map { edited.values[$0.slot] }).token
            let taken = try await post(
                client, path + "/edit",
                ["token": token, "attribute": "name", "value": "author 008", "expected": current])
            #expect(taken.status == .conflict)
            #expect(String(buffer: taken.body).contains("already has the same &#39;name&#39;"))
            #expect(
                try store.count(StoreQuery(entityName: "Author", filter: .equal("name", .string("author 008")))) == 1)
            // The same expected values again: the model changed since, so the edit is a conflict.
            let stale = try await post(
                client, path + "/edit", ["token": token, "attribute": "born", "value": "2001", "expected": expected])
            #expect(stale.status == .conflict)
            #expect(try fixture.born("author 007") == 1999)
            // An author with books is not deleted; one without is.
            let withBooks = try #require(
                try store.fetch(StoreQuery(entityName: "Author", filter: .equal("name", .string("author 001")))).first)
            let refused = try await post(
                client, ModelLink.path(withBooks.persistentIdentifier) + "/delete", ["token": token])
            #expect(refused.status == .forbidden)
            #expect(try await post(client, path + "/delete", ["token": token]).status == .seeOther)
            #expect(try store.snapshot(author.persistentIdentifier) == nil)
            #expect(try store.count(StoreQuery(entityName: "Author")) == 29)
        }
    }

    /// An edit to a value another model holds under a uniqueness constraint is refused with 409 and
    /// changes nothing, on every kind of store the studio opens by URL (`memory:` keeps no schema, so
    /// the studio cannot open it).
    @Test(arguments: ["sqlite", "json", "log"])
    func refusesAUniqueClashWithConflict(scheme: String) async throws {
        let making = { try LibraryFixture(scheme: scheme) }
        try await withStudio(writes: true, making: making) { _, store, client in
            let author = try #require(
                try store.fetch(StoreQuery(entityName: "Author", filter: .equal("name", .string("author 007")))).first)
            let expected = ExpectedValues(author.entity.attributes.map { author.values[$0.slot] }).token
            let taken = try await post(
                client, ModelLink.path(author.persistentIdentifier) + "/edit",
                ["token": self.token, "attribute": "name", "value": "author 008", "expected": expected])
            #expect(taken.status == .conflict, "\(scheme)")
            #expect(String(buffer: taken.body).contains("already has the same &#39;name&#39;"))
            #expect(try store.snapshot(author.persistentIdentifier) == author)
            #expect(
                try store.count(StoreQuery(entityName: "Author", filter: .equal("name", .string("author 008")))) == 1)
            #expect(try store.history(limit: 1).first?.author == "fixture")
        }
    }

    @Test func aPageSubscribesAfterTheTransactionItWasRenderedAt() async throws {
        try await withStudio { fixture, store, client in
            let before = try store.newestTransactionNumber()
            #expect(
                try await page(client, "/entities/Author").contains(
                    "id=\"live\" class=\"live\" data-after=\"\(before)\""))
            try fixture.setBorn("author 002", 1901)
            let after = try store.newestTransactionNumber()
            #expect(after > before)
            let html = try await page(client, "/")
            #expect(html.contains("data-after=\"\(after)\""))
            #expect(html.contains("new EventSource('/events?after=' + encodeURIComponent(live.dataset.after))"))
            // An error page does not reload itself.
            #expect(!(try await page(client, "/entities/Nothing", status: .notFound)).contains("data-after"))
        }
    }

    @Test func drawsTheSchemaAndTheHistory() async throws {
        try await withStudio { _, _, client in
            let schema = try await page(client, "/schema")
            #expect(schema.contains("<svg"))
            #expect(schema.contains("id=\"entity-Author\""))
            #expect(schema.contains("books ⇄ author"))
            let history = try await page(client, "/history")
            #expect(history.contains("author <code>fixture</code>"))
            #expect(history.contains("40 changes"))
        }
    }
}
