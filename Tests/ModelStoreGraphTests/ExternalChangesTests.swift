import Foundation
import ModelStore
import ModelStoreJSONFile
import ModelStoreTestSupport
import Testing

/// Two containers on one file, as two processes would have: each sees the other's saves through
/// ``ModelContainer/watchExternalChanges(every:)``, and never its own twice.
struct ExternalChangesTests {
    @Test func anotherContainersSaveReachesTheWatchersChanges() async throws {
        let folder = try TemporaryDirectory()
        let url = folder.url.appendingPathComponent("shared.json")
        let schema = Schema([Owner.self, Pet.self, Toy.self])
        let watching = try ModelContainer(for: schema, configurations: [JSONFileStoreConfiguration.jsonFile(at: url)])
        let other = try ModelContainer(for: schema, configurations: [JSONFileStoreConfiguration.jsonFile(at: url)])
        var changes = watching.changes.makeAsyncIterator()
        let watch = watching.watchExternalChanges(every: .milliseconds(20))
        defer { watch.cancel() }

        // The watcher's own save: published once, as the context's.
        let mine = ModelContext(watching)
        mine.insert(Owner("Mine"))
        try mine.save()
        let own = try #require(await changes.next())
        guard case .context = own.origin else {
            Issue.record("the container's own save came with origin \(own.origin)")
            return
        }

        // The other container's save and batch delete: published as external, with author and token.
        let theirs = ModelContext(other)
        theirs.author = "importer"
        let rex = Pet("Rex")
        theirs.insert(rex)
        try theirs.save()
        let external = try #require(await changes.next())
        #expect(external.origin == .external)
        #expect(external.insertedIdentifiers == [rex.persistentModelID])
        #expect(external.author == "importer")
        #expect(external.historyTokens.count == 1)
        // The watcher's store reloaded the file: the other container's model is fetched.
        #expect(try ModelContext(watching).fetch(FetchDescriptor<Pet>()).map(\.name) == ["Rex"])

        try theirs.delete(model: Toy.self)  // nothing to delete: no transaction, no event
        rex.weight = 4
        try theirs.save()
        let update = try #require(await changes.next())
        #expect(update.origin == .external && update.updatedIdentifiers == [rex.persistentModelID])
    }
}
