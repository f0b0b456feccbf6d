import Foundation
import Hummingbird
import HummingbirdTesting
import ModelStore
import Testing

@testable import ModelStoreStudio

/// A store of a class hierarchy (an abstract root with a subclass of a subclass), written with the
/// model types and browsed without them: the diagram, each model's class, the filter by class.
@Suite struct StudioClassHierarchyTests {
    let router = StudioRouterTests()

    /// The part of a page from `marker` to the next `end`.
    func part(of html: String, from marker: String, to end: String) throws -> Substring {
        let start = try #require(html.range(of: marker), "no '\(marker)'")
        let rest = html[start.lowerBound...]
        return rest[..<(rest.range(of: end)?.upperBound ?? rest.endIndex)]
    }

    /// The titles a model list shows, in its order.
    func titles(_ html: String) -> [String] {
        html.matches(of: /<td data-property="title">([^<]*)</).map { String($0.output.1) }
    }

    @Test func drawsABoxPerClassWithAnIsAArrowToItsSuperclass() async throws {
        try await router.withStudio(making: LibraryFixture.media) { _, _, client in
            let schema = try await router.page(client, "/schema")
            let root = try part(of: schema, from: "id=\"entity-Medium\"", to: "</g>")
            #expect(root.contains("«abstract»"))
            #expect(root.contains(">title ◆<") && root.contains(">year<"))
            #expect(!root.contains(">minutes<") && !root.contains(">_modelClass<"))
            let film = try part(of: schema, from: "id=\"class-Film\"", to: "</g>")
            #expect(film.contains(">minutes<") && !film.contains(">title"))
            #expect(film.contains("href=\"/entities/Medium?class=Film\""))
            let documentary = try part(of: schema, from: "id=\"class-Documentary\"", to: "</g>")
            #expect(documentary.contains(">subject<") && !documentary.contains(">minutes<"))
            #expect(try part(of: schema, from: "id=\"class-Album\"", to: "</g>").contains(">tracks<"))
            // One "is a" arrow per subclass, to the right box.
            #expect(schema.matches(of: /class="is-a"/).count == 3)
            for name in ["Film", "Documentary", "Album"] {
                #expect(schema.contains("class=\"is-a\" data-from=\"\(name)\""))
            }
        }
    }

    @Test func laysAHierarchyOutAsATree() throws {
        let fixture = try LibraryFixture.media()
        defer { fixture.remove() }
        let store = try StudioStore(url: fixture.url)
        defer { store.close() }
        let boxes = SchemaDiagram.layout(SchemaDiagram.items(of: store.entities)).boxes
        let root = try #require(boxes["Medium"])
        let film = try #require(boxes["class:Film"])
        let album = try #require(boxes["class:Album"])
        let documentary = try #require(boxes["class:Documentary"])
        // Subclasses one level below their superclass, each class over the middle of its subclasses.
        #expect(film.y == album.y && film.y > root.y + root.height && documentary.y > film.y + film.height)
        #expect(documentary.x == film.x && film.x < album.x)
        #expect(root.centerX == (film.centerX + album.centerX) / 2)
    }

    @Test func listsEachModelsClassAndFiltersByAClassWithItsSubclasses() async throws {
        try await router.withStudio(making: LibraryFixture.media) { _, _, client in
            let entities = try await router.page(client, "/")
            let tree = try part(of: entities, from: "data-classes=\"Medium\"", to: "</div>")
            #expect(tree.contains(#"href="/entities/Medium?class=Documentary">Documentary</a>"#))
            let all = try await router.page(client, "/entities/Medium")
            #expect(titles(all) == ["Alien", "Heat", "Koyaanisqatsi", "Low"])
            #expect(all.contains(#"<td data-property="_modelClass"><a href="/entities/Medium?class=Album">Album</a>"#))
            #expect(all.contains(#"<td data-property="_modelClass"><a href="/entities/Medium?class=Documentary">"#))
            // The classes as a tree: Documentary under Film.
            let classes = try part(of: all, from: "id=\"classes\"", to: "</nav>")
            #expect(classes.contains(#"data-class="Film" href="/entities/Medium?class=Film">Film</a><ul><li>"#))
            #expect(classes.contains("<i>Medium</i> <span class=\"muted\">abstract</span>"))
            // A class's models include its subclasses', with only the columns that class has.
            let films = try await router.page(client, "/entities/Medium?class=Film")
            #expect(titles(films) == ["Alien", "Heat", "Koyaanisqatsi"])
            #expect(films.contains("data-property=\"minutes\"") && !films.contains("data-property=\"tracks\""))
            #expect(films.contains(#"<a class="current" data-class="Film""#))
            #expect(films.contains("_modelClass in ["))  // the explanation shows the class test the store runs
            #expect(titles(try await router.page(client, "/entities/Medium?class=Documentary")) == ["Koyaanisqatsi"])
            // With a filter, both apply; the paging and sorting links keep the class.
            let old = try await router.page(client, "/entities/Medium?class=Film&filter=year+%3C+1990")
            #expect(titles(old) == ["Alien", "Koyaanisqatsi"])
            #expect(old.contains("name=\"class\" value=\"Film\""))
            #expect(old.contains("href=\"/entities/Medium?filter=year%20%3C%201990&class=Film&sort=year\""))
            // A class the entity does not store is refused with the classes it has.
            let unknown = try await router.page(client, "/entities/Medium?class=Book", status: .badRequest)
            #expect(unknown.contains("&#39;Medium&#39; stores no class &#39;Book&#39;"))
            #expect(unknown.contains("&#39;Medium&#39;, &#39;Film&#39;, &#39;Album&#39;, &#39;Documentary&#39;"))
        }
    }

    @Test func showsAModelsClassAndTheClassesItInheritsFrom() async throws {
        try await router.withStudio(making: LibraryFixture.media) { _, store, client in
            let documentary = try #require(
                try store.fetch(StoreQuery(entityName: "Medium", filter: .equal("title", .string("Koyaanisqatsi"))))
                    .first)
            let html = try await router.page(client, ModelLink.path(documentary.persistentIdentifier))
            let lineage = try part(of: html, from: "<p id=\"class\">", to: "</p>")
            #expect(lineage.contains(">Documentary</a></b> · is a <a data-class=\"Film\""))
            #expect(lineage.contains("is a <a data-class=\"Medium\" href=\"/entities/Medium?class=Medium\">"))
            // Its own and inherited attributes, not another class's, nor the class attribute as a value.
            for name in ["title", "year", "minutes", "subject"] { #expect(html.contains("id=\"value-\(name)\"")) }
            #expect(!html.contains("id=\"value-tracks\"") && !html.contains("id=\"value-_modelClass\""))
        }
    }

    @Test func editsAnAttributeOfTheModelsClassButNotItsClass() async throws {
        try await router.withStudio(writes: true, making: LibraryFixture.media) { fixture, store, client in
            let alien = try #require(
                try store.fetch(StoreQuery(entityName: "Medium", filter: .equal("title", .string("Alien")))).first)
            let path = ModelLink.path(alien.persistentIdentifier)
            let expected = ExpectedValues(alien.entity.attributes.map { alien.values[$0.slot] }).token
            func edit(_ attribute: String, _ value: String) async throws -> TestResponse {
                try await router.post(
                    client, path + "/edit",
                    ["token": router.token, "attribute": attribute, "value": value, "expected": expected])
            }
            let reclassed = try await edit("_modelClass", "Album")
            #expect(reclassed.status == .forbidden)
            #expect(String(buffer: reclassed.body).contains("records the class of"))
            let foreign = try await edit("tracks", "3")
            #expect(foreign.status == .badRequest)
            #expect(
                String(buffer: foreign.body).contains("is a &#39;Film&#39;, which has no attribute &#39;tracks&#39;"))
            #expect(try await edit("minutes", "116").status == .seeOther)
            // The app reads it back as a film with the new running time.
            let media = try fixture.media()
            #expect(media["Alien"]?.0 == "Film" && media["Alien"]?.1 == 116)
            #expect(media["Low"]?.0 == "Album" && media.count == 4)
            #expect(try store.history(limit: 1).first?.author == "studio")
        }
    }
}
