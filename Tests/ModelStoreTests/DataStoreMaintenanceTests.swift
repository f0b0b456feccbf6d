import Foundation
import ModelStore
import ModelStoreInMemory
import ModelStoreTestSupport
import ModelStoreTooling
import Testing

/// A scheme's maintenance: the defaults a scheme that only reads its stored schema gets, and the
/// file listing every maintenance starts from.
struct DataStoreMaintenanceTests {
    private let stored = Schema.Description(version: Schema.Version(2, 0, 0), entities: [])

    private func scheme() -> StoreScheme {
        let stored = self.stored
        return StoreScheme("kept", summary: "a test scheme", location: .required("PATH"), example: "kept:x") { _ in
            InMemoryStoreConfiguration()
        }
        .readingStoredSchema { _ in stored }
    }

    @Test func aSchemeThatReadsItsSchemaGetsTheDefaults() throws {
        let scheme = scheme()
        let maintenance = try #require(scheme.maintenance)
        let url = try StoreURL("kept:somewhere")
        let request = StoreMaintenanceRequest(
            name: "kept:somewhere", url: url, configuration: InMemoryStoreConfiguration())
        #expect(try maintenance.storedSchema(request) == stored)
        #expect(try maintenance.inspect(request) == nil)
        let verification = try maintenance.verify(request)
        #expect(!verification.isComplete && verification.problems.isEmpty)
        for operation in [maintenance.repair, maintenance.compact, maintenance.seal] {
            do {
                _ = try operation(request)
                Issue.record("the default should refuse")
            } catch let error as DataStoreError {
                #expect(error.code == .unsupportedFeature)
                #expect(error.message.contains("'kept:somewhere'"))
            }
        }
    }

    @Test func aSchemeWithoutAReaderHasNoMaintenance() {
        let scheme = StoreScheme("bare", summary: "a test scheme", location: .none, example: "bare:") { _ in
            InMemoryStoreConfiguration()
        }
        #expect(scheme.maintenance == nil)
    }

    @Test func maintainedByAlsoReadsTheStoredSchema() throws {
        struct Fixed: DataStoreMaintenance {
            let stored: Schema.Description
            func storedSchema(_ request: StoreMaintenanceRequest) throws -> Schema.Description { stored }
        }
        let scheme = StoreScheme(
            "fixed", summary: "a test scheme", location: .required("PATH"), example: "fixed:x"
        ) { _ in InMemoryStoreConfiguration() }
        .maintained(by: Fixed(stored: stored))
        #expect(try scheme.readStoredSchema?(try StoreURL("fixed:here")) == stored)
    }

    @Test func filesListAFileAndTheFilesBesideIt() throws {
        let temporary = try TemporaryDirectory()
        let folder = temporary.url
        try Data("abc".utf8).write(to: folder.appendingPathComponent("store.json"))
        try Data("de".utf8).write(to: folder.appendingPathComponent("store.json.backup"))
        try Data("f".utf8).write(to: folder.appendingPathComponent("other.json"))
        #expect(
            StoreFile.all(at: folder.appendingPathComponent("store.json")) == [
                StoreFile(path: "store.json", byteCount: 3), StoreFile(path: "store.json.backup", byteCount: 2),
            ])
        #expect(StoreFile.all(at: folder).map(\.path) == ["other.json", "store.json", "store.json.backup"])
        #expect(StoreFile.all(at: folder.appendingPathComponent("missing")).isEmpty)
    }
}
