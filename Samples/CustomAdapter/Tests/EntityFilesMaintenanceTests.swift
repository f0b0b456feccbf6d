import CustomAdapterSample
import Foundation
import ModelStore
import ModelStoreTestSupport
import ModelStoreTooling
import Testing

/// A third-party store's maintenance, reached the way `modelstore` reaches every store: through
/// its registered scheme, with no adapter type named.
struct EntityFilesMaintenanceTests {
    private let directory: URL
    private let registry = StoreRegistry()

    init() throws {
        directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("EntityFilesMaintenanceTests-\(UUID().uuidString)", isDirectory: true)
        let schema = Schema([Shelf.self, Book.self, Author.self])
        _ = registry.register(.entityFiles.maintained(by: EntityFilesMaintenance(schema: schema)))
    }

    /// The maintenance and request for `files:DIR`, as the tool finds them.
    private func maintenance() throws -> (any DataStoreMaintenance, StoreMaintenanceRequest) {
        let url = try registry.url("files:\(directory.path)")
        let scheme = try #require(registry.scheme(named: url.scheme))
        let maintenance = try #require(scheme.maintenance)
        let configuration = try scheme.makeConfiguration(url)
        return (maintenance, StoreMaintenanceRequest(name: "files:x", url: url, configuration: configuration))
    }

    private func addLibrary() throws {
        let context = ModelContext(try ModelContainer(for: Shelf.self, configurations: .entityFiles(at: directory)))
        let le = Author("Le Guin")
        context.insert(
            Shelf(
                "Fiction",
                books: [
                    Book("The Dispossessed", pages: 387, year: 1974, author: le),
                    Book("The Lathe of Heaven", pages: 184, year: 1971, author: le),
                ]))
        try context.save()
    }

    @Test func inspectVerifyAndFilesGoThroughTheScheme() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        try addLibrary()
        let (maintenance, request) = try maintenance()
        let inspection = try #require(try maintenance.inspect(request))
        let counts = Dictionary(uniqueKeysWithValues: inspection.entities.map { ($0.name, $0.modelCount) })
        #expect(counts == ["Shelf": 1, "Book": 2, "Author": 1])
        let verification = try maintenance.verify(request)
        #expect(verification.isComplete && verification.problems.isEmpty)
        #expect(maintenance.files(request).map(\.path).contains("manifest.json"))
        #expect(try maintenance.storedSchema(request).entities.map(\.name).sorted() == ["Author", "Book", "Shelf"])
        let readStoredSchema = try #require(registry.scheme(named: "files")?.readStoredSchema)
        let stored = try readStoredSchema(request.url)
        #expect(stored.entities.count == 3)
    }

    @Test func verifyNamesADamagedFileAndUnsupportedOperationsSaySo() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        try addLibrary()
        let (maintenance, request) = try maintenance()
        let bookFile = try #require(
            try FileManager.default.contentsOfDirectory(atPath: directory.path).first { $0.hasPrefix("Book.") })
        try Data("{ not json".utf8).write(to: directory.appendingPathComponent(bookFile))
        let verification = try maintenance.verify(request)
        #expect(verification.problems.map(\.file) == [bookFile])
        #expect(throws: DataStoreError.self) { _ = try maintenance.compact(request) }
        do {
            _ = try maintenance.repair(request)
            Issue.record("repair should not be supported")
        } catch let error as DataStoreError {
            #expect(error.code == .unsupportedFeature)
        }
    }

    @Test func aDirectoryWithoutAStoreIsNotFound() throws {
        let (maintenance, request) = try maintenance()
        do {
            _ = try maintenance.storedSchema(request)
            Issue.record("an empty location should not have a schema")
        } catch let error as DataStoreError {
            #expect(error.code == .notFound)
        }
    }
}
