import CustomAdapterSample
import Foundation
import ModelStore
import ModelStoreTestSupport
import Testing

struct EntityFilesStoreTests {
    private let directory: URL

    init() throws {
        directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("EntityFilesStoreTests-\(UUID().uuidString)", isDirectory: true)
    }

    private func container() throws -> ModelContainer {
        try ModelContainer(for: Shelf.self, configurations: .entityFiles(at: directory))
    }

    /// Every file in the store's directory with its bytes.
    private func files() throws -> [String: Data] {
        guard FileManager.default.fileExists(atPath: directory.path) else { return [:] }
        var files: [String: Data] = [:]
        for name in try FileManager.default.contentsOfDirectory(atPath: directory.path) {
            files[name] = try Data(contentsOf: directory.appendingPathComponent(name))
        }
        return files
    }

    /// Saves a shelf of three books by two authors.
    private func addLibrary() throws {
        let context = ModelContext(try container())
        let le = Author("Le Guin")
        let calvino = Author("Calvino")
        context.insert(
            Shelf(
                "Fiction",
                books: [
                    Book("The Dispossessed", pages: 387, year: 1974, author: le),
                    Book("Invisible Cities", pages: 165, year: 1972, author: calvino),
                    Book("The Lathe of Heaven", pages: 184, year: 1971, author: le),
                ]))
        try context.save()
    }

    /// The code of the `DataStoreError` the body throws.
    private func code(_ body: () throws -> Any) throws -> DataStoreError.Code {
        try #require(throws: DataStoreError.self) { _ = try body() }.code
    }

    private func cleanUp() { try? FileManager.default.removeItem(at: directory) }

    @Test func modelsAndRelationshipsSurviveReopening() throws {
        defer { cleanUp() }
        try addLibrary()
        let context = ModelContext(try container())
        let shelf = try #require(try context.fetch(FetchDescriptor<Shelf>()).first)
        #expect(shelf.label == "Fiction")
        #expect(Set(shelf.books.map(\.title)) == ["The Dispossessed", "Invisible Cities", "The Lathe of Heaven"])
        let dispossessed = try #require(shelf.books.first { $0.title == "The Dispossessed" })
        #expect(dispossessed.author?.name == "Le Guin")
        #expect(dispossessed.author?.books.count == 2)
        #expect(dispossessed.shelf === shelf)
    }

    @Test func identifiersArePermanentAndNeverReused() throws {
        defer { cleanUp() }
        try addLibrary()
        let first = ModelContext(try container())
        let ids = try first.fetchIdentifiers(FetchDescriptor<Book>())
        #expect(ids.count == 3 && ids.allSatisfy { !$0.isTemporary })
        #expect(Set(ids.compactMap(\.storeIdentifier)).count == 1)
        let doomed = try #require(try first.fetch(FetchDescriptor<Book>(sortBy: [SortDescriptor(\.pages)])).last)
        let doomedID = doomed.persistentModelID
        first.delete(doomed)
        try first.save()

        let second = ModelContext(try container())
        let reread = try second.fetchIdentifiers(FetchDescriptor<Book>())
        #expect(Set(reread) == Set(ids).subtracting([doomedID]))
        let new = Book("Cosmicomics", pages: 153, year: 1965)
        second.insert(new)
        try second.save()
        #expect(!ids.contains(new.persistentModelID))
        #expect(new.persistentModelID.storeIdentifier == doomedID.storeIdentifier)
    }

    @Test func predicatesFallBackToTheContextAndSortsRunWhereTheyCan() throws {
        defer { cleanUp() }
        try addLibrary()
        let context = ModelContext(try container())
        // A predicate: the store throws preferInMemoryFilter and the context filters.
        let long = try context.fetch(
            FetchDescriptor<Book>(
                predicate: #Predicate { $0.pages > 170 }, sortBy: [SortDescriptor(\.title)]))
        #expect(long.map(\.title) == ["The Dispossessed", "The Lathe of Heaven"])
        #expect(try context.fetchCount(FetchDescriptor<Book>(predicate: #Predicate { $0.pages > 170 })) == 2)
        // A numeric sort with offset and limit runs in the store.
        var byPages = FetchDescriptor<Book>(sortBy: [SortDescriptor(\.pages, order: .reverse)])
        byPages.fetchOffset = 1
        byPages.fetchLimit = 1
        #expect(try context.fetch(byPages).map(\.title) == ["The Lathe of Heaven"])
        // A string sort runs in the context; the order is the same either way.
        var byTitle = FetchDescriptor<Book>(sortBy: [SortDescriptor(\.title)])
        byTitle.fetchLimit = 2
        #expect(try context.fetch(byTitle).map(\.title) == ["Invisible Cities", "The Dispossessed"])
        #expect(
            try context.fetch(FetchDescriptor<Book>(sortBy: [SortDescriptor(\.published)])).map(\.title) == [
                "The Lathe of Heaven", "Invisible Cities", "The Dispossessed",
            ])
    }

    @Test func theStoreAnswersPredicatesWithTheFallbackError() throws {
        defer { cleanUp() }
        var configuration = EntityFilesConfiguration(directory: directory)
        configuration.schema = Schema(Shelf.self)
        let store = try EntityFilesStore(configuration, migrationPlan: nil)
        let filtered = DataStoreFetchRequest(
            descriptor: FetchDescriptor<Book>(predicate: #Predicate { $0.pages > 1 }), editingState: EditingState())
        #expect(try code { try store.fetch(filtered) } == .preferInMemoryFilter)
        let sorted = DataStoreFetchRequest(
            descriptor: FetchDescriptor<Book>(sortBy: [SortDescriptor(\.title)]), editingState: EditingState())
        #expect(try code { try store.fetch(sorted) } == .preferInMemorySort)
    }

    @Test func aUniqueViolationChangesNoFile() throws {
        defer { cleanUp() }
        try addLibrary()
        let before = try files()
        let context = ModelContext(try container())
        context.duplicateInsertPolicy = .error  // the store's refusal, not an upsert
        context.insert(Shelf("Fiction"))
        #expect(try code { try context.save() } == .uniqueConstraintViolation)
        #expect(try files() == before)
        #expect(try ModelContext(try container()).fetchCount(FetchDescriptor<Shelf>()) == 1)
    }

    @Test func deleteRulesArePersisted() throws {
        defer { cleanUp() }
        try addLibrary()
        let context = ModelContext(try container())
        let shelf = try #require(try context.fetch(FetchDescriptor<Shelf>()).first)
        context.delete(shelf)
        try context.save()
        let reopened = ModelContext(try container())
        #expect(try reopened.fetchCount(FetchDescriptor<Book>()) == 0, "cascade deletes the books")
        let authors = try reopened.fetch(FetchDescriptor<Author>())
        #expect(authors.count == 2, "nullify keeps the authors")
        #expect(authors.allSatisfy { $0.books.isEmpty })
    }

    @Test func aSaveRewritesOnlyTheFilesOfChangedEntities() throws {
        defer { cleanUp() }
        try addLibrary()
        #expect(Set(try files().keys) == ["manifest.json", "Shelf.1.json", "Book.1.json", "Author.1.json"])
        let context = ModelContext(try container())
        let book = try #require(try context.fetch(FetchDescriptor<Book>()).first)
        book.pages += 1
        try context.save()
        #expect(Set(try files().keys) == ["manifest.json", "Shelf.1.json", "Book.2.json", "Author.1.json"])
    }

    @Test func filesOfAnInterruptedSaveAreIgnored() throws {
        defer { cleanUp() }
        try addLibrary()
        // A save that crashed after writing its entity file, before replacing the manifest.
        try Data("[{\"half\": ".utf8).write(to: directory.appendingPathComponent("Book.2.json"))
        let context = ModelContext(try container())
        #expect(try context.fetchCount(FetchDescriptor<Book>()) == 3)
        let book = try #require(try context.fetch(FetchDescriptor<Book>()).first)
        book.title = "Renamed"
        try context.save()
        #expect(
            try ModelContext(try container()).fetchCount(
                FetchDescriptor<Book>(
                    predicate: #Predicate { $0.title == "Renamed" })) == 1)
    }

    @Test func aDamagedFileFailsTheOpenAndIsLeftAsItWas() throws {
        defer { cleanUp() }
        try addLibrary()
        try Data("not json".utf8).write(to: directory.appendingPathComponent("Book.1.json"))
        let before = try files()
        let error = try #require(throws: DataStoreError.self) { try container() }
        #expect(error.code == .corrupted)
        #expect(error.message.contains("Book.1.json"))
        #expect(try files() == before)
    }

    @Test func openingAMissingDirectoryCreatesNothingUntilTheFirstSave() throws {
        defer { cleanUp() }
        let context = ModelContext(try container())
        #expect(try context.fetchCount(FetchDescriptor<Shelf>()) == 0)
        #expect(!FileManager.default.fileExists(atPath: directory.path))
        context.insert(Shelf("New"))
        try context.save()
        #expect(FileManager.default.fileExists(atPath: directory.appendingPathComponent("manifest.json").path))
    }

    @Test func eraseRemovesTheStoresFiles() throws {
        defer { cleanUp() }
        try addLibrary()
        let container = try container()
        try container.erase()
        #expect(try files().isEmpty)
        #expect(try ModelContext(container).fetchCount(FetchDescriptor<Book>()) == 0)
    }

    @Test func aFileIsNotADirectory() throws {
        defer { cleanUp() }
        try Data().write(to: directory)
        let error = try #require(throws: DataStoreError.self) { try container() }
        #expect(error.code == .invalidConfiguration)
        #expect(error.message.contains(directory.path))
    }

    @Test(
        .disabled(
            if: StoreRegistry.resolve("files:x").isFromEnvironment,
            "MODELSTORE_URL is set for this run and would replace the URL the test opens"))
    func theFilesSchemeOpensTheStoreFromAURL() throws {
        defer { cleanUp() }
        let registry = StoreRegistry()
        registry.register(.entityFiles)
        let container = try ModelContainer(for: Shelf.self, url: "files:" + directory.path, registry: registry)
        let configuration = try #require(container.configurations.first as? EntityFilesConfiguration)
        #expect(configuration.directory.path == directory.path)
        let error = try #require(throws: DataStoreError.self) {
            try ModelContainer(for: Shelf.self, url: "files:", registry: registry)
        }
        #expect(error.message == "the store URL 'files:' needs a DIR after 'files:'")
    }
}
