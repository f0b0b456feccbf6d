import Foundation
import ModelStore
import ModelStoreAdapters
import ModelStoreAppendLog
import ModelStoreCrypto
import ModelStoreInMemory
import ModelStoreJSONFile
import ModelStoreSQLite
import ModelStoreTestSupport
import Testing

/// SwiftData's `ModelConfiguration` and `ModelContainer(for:)` with no configuration: the lines
/// SwiftData code writes, compiled and run unchanged.
///
/// Serialized: three tests change `StoreRegistry.shared.defaultStoreURL`, which no other suite reads
/// (every other test passes a configuration), so that no test writes into the home folder.
@Suite(.serialized) struct ModelConfigurationTests {
    private func tripNames(in container: ModelContainer) throws -> [String] {
        try ModelContext(container).fetch(FetchDescriptor<Trip>(sortBy: [SortDescriptor(\.name)])).map(\.name)
    }

    private func addTrip(_ name: String, to container: ModelContainer) throws {
        let context = ModelContext(container)
        context.insert(Trip(name: name, start: .now))
        try context.save()
    }

    @Test func theInMemoryLineFromSwiftDataTestsWorksUnchanged() throws {
        let container = try ModelContainer(
            for: Trip.self, configurations: ModelConfiguration(isStoredInMemoryOnly: true))
        #expect(container.stores.first is InMemoryStore)
        try addTrip("Lisbon", to: container)
        #expect(try tripNames(in: container) == ["Lisbon"])
        // The schema reaches the related type through the relationship, as in SwiftData.
        #expect(container.schema.entities.map { $0.name }.sorted() == ["Item", "Trip"])
    }

    @Test func aSecondContainerOnANamedInMemoryStoreSharesItsModels() throws {
        let name = "shared-\(UUID().uuidString)"
        let first = try ModelContainer(
            for: Trip.self, configurations: ModelConfiguration(name, isStoredInMemoryOnly: true))
        try addTrip("Lisbon", to: first)
        let second = try ModelContainer(
            for: Trip.self, configurations: ModelConfiguration(name, isStoredInMemoryOnly: true))
        #expect(try tripNames(in: second) == ["Lisbon"], "the second container starts from the first's models")
        try addTrip("Porto", to: second)
        #expect(try tripNames(in: first) == ["Lisbon", "Porto"])
        #expect(first.stores[0].identifier == second.stores[0].identifier, "identifiers work in both containers")
        // By URL too; an unnamed configuration and `memory:` stay private.
        let byURL = try ModelContainer(for: Trip.self, url: "memory:\(name)")
        #expect(try tripNames(in: byURL) == ["Lisbon", "Porto"])
        let unnamed = try ModelContainer(
            for: Trip.self, configurations: ModelConfiguration(isStoredInMemoryOnly: true))
        #expect(try tripNames(in: unnamed).isEmpty)
        #expect(try tripNames(in: try ModelContainer(for: Trip.self, url: "memory:")).isEmpty)
    }

    @Test func aSharedInMemoryStoreIsGoneWithItsLastContainerAndKeepsItsSchema() throws {
        let name = "shared-\(UUID().uuidString)"
        do {
            let container = try ModelContainer(
                for: Trip.self, configurations: ModelConfiguration(name, isStoredInMemoryOnly: true))
            try addTrip("Lisbon", to: container)
            let error = expectError(.invalidConfiguration) {
                _ = try ModelContainer(
                    for: Place.self, configurations: ModelConfiguration(name, isStoredInMemoryOnly: true))
            }
            #expect(error?.message.contains("another schema") == true)
        }
        let reopened = try ModelContainer(
            for: Trip.self, configurations: ModelConfiguration(name, isStoredInMemoryOnly: true))
        #expect(try tripNames(in: reopened).isEmpty, "nothing outlives the last open store of the name")
    }

    @Test func aURLOpensTheStoreItsExtensionNamesAndKeepsTheData() throws {
        let directory = try TemporaryDirectory()
        let cases: [(String, any DataStore.Type)] = [
            ("trips.store", SQLiteStore.self), ("trips.sqlite", SQLiteStore.self), ("trips.json", JSONFileStore.self),
            ("trips.log", AppendLogStore.self),
        ]
        for (file, storeType) in cases {
            let url = directory.file(file)
            do {
                let container = try ModelContainer(
                    for: Trip.self, configurations: ModelConfiguration("trips", url: url))
                #expect(type(of: container.stores[0]) == storeType, "\(file)")
                #expect(container.configurations[0].name == "trips")
                try addTrip("Porto", to: container)
            }
            let reopened = try ModelContainer(for: Trip.self, configurations: ModelConfiguration(url: url))
            #expect(try tripNames(in: reopened) == ["Porto"], "\(file)")
            #expect(FileManager.default.fileExists(atPath: url.path), "\(file)")
        }
    }

    @Test func aContainerWithoutConfigurationsOpensTheDefaultStore() throws {
        // Linking ModelStoreAdapters set the default store when the test process started.
        let registered = try #require(StoreRegistry.shared.defaultStoreURL)
        #expect(registered == "sqlite:" + ModelConfiguration.defaultStoreURL.path)
        #expect(registered.hasSuffix("/default.store"))
        #if !canImport(Darwin)
            let dataHome = ProcessInfo.processInfo.environment["XDG_DATA_HOME"].flatMap { $0.isEmpty ? nil : $0 }
            let expectedFolder =
                (dataHome ?? (NSHomeDirectory() + "/.local/share")) + "/"
                + ProcessInfo.processInfo.processName
            #expect(ModelConfiguration.defaultStoreURL.deletingLastPathComponent().path == expectedFolder)
        #endif

        // Point the default at a temporary folder rather than write into the home directory.
        let directory = try TemporaryDirectory()
        StoreRegistry.shared.defaultStoreURL = "sqlite:" + directory.file("default.store").path
        defer { StoreRegistry.shared.defaultStoreURL = registered }
        do {
            let container = try ModelContainer(for: Trip.self)
            #expect(container.stores.first is SQLiteStore)
            try addTrip("Kyoto", to: container)
            let viaConfiguration = try ModelContainer(for: Trip.self, configurations: ModelConfiguration())
            #expect(try tripNames(in: viaConfiguration) == ["Kyoto"])
        }
        #expect(FileManager.default.fileExists(atPath: directory.file("default.store").path))
    }

    @Test func theDefaultStoreTakesTheConfigurationsKeyUnlessItsURLNamesAnother() throws {
        let registered = StoreRegistry.shared.defaultStoreURL
        defer { StoreRegistry.shared.defaultStoreURL = registered }
        let directory = try TemporaryDirectory()
        let path = directory.file("default.store").path
        let key = try EncryptionKey.random()
        StoreRegistry.shared.defaultStoreURL = "sqlite:" + path
        do {
            let container = try ModelContainer(
                for: Trip.self, configurations: ModelConfiguration(encryption: .key(key)))
            try addTrip("Kyoto", to: container)
        }
        expectError(.keyRequired) { try ModelContainer(for: Trip.self) }
        let reopened = try ModelContainer(for: Trip.self, configurations: ModelConfiguration(encryption: .key(key)))
        #expect(try tripNames(in: reopened) == ["Kyoto"])

        StoreRegistry.shared.defaultStoreURL = "sqlite:" + path + "?key-env=MODELSTORE_TEST_UNSET_KEY"
        let error = expectError(.invalidConfiguration) {
            try ModelContainer(for: Trip.self, configurations: ModelConfiguration(encryption: .key(key)))
        }
        #expect(error?.message.contains("MODELSTORE_URL") == true, "\(String(describing: error))")
        #expect(
            error?.message.contains("'MODELSTORE_TEST_UNSET_KEY'") == true, "the message names the URL's key source")
    }

    @Test func withoutADefaultStoreTheErrorSaysHowToGetOne() throws {
        let registered = StoreRegistry.shared.defaultStoreURL
        StoreRegistry.shared.defaultStoreURL = nil
        defer { StoreRegistry.shared.defaultStoreURL = registered }
        let error = try #require(throws: DataStoreError.self) { _ = try ModelContainer(for: Trip.self) }
        #expect(error.code == .invalidConfiguration)
        #expect(error.message.contains("no default store"))
        #expect(error.remedy?.contains("MODELSTORE_URL") == true)
    }

    @Test func cloudKitDatabaseNoneOpensAndTheOthersAreRefusedBeforeAnythingIsWritten() throws {
        // SwiftData's full spelling compiles, and `.none` keeps the store local.
        let local = try ModelContainer(
            for: Trip.self,
            configurations: ModelConfiguration(
                isStoredInMemoryOnly: true, allowsSave: true, groupContainer: .none, cloudKitDatabase: .none))
        try addTrip("Lisbon", to: local)
        #expect(try tripNames(in: local) == ["Lisbon"])

        let directory = try TemporaryDirectory()
        for database in [ModelConfiguration.CloudKitDatabase.automatic, .private("iCloud.com.example.trips")] {
            let url = directory.file("trips-\(database.hashValue).store")
            let error = try #require(throws: DataStoreError.self) {
                _ = try ModelContainer(
                    for: Trip.self, configurations: ModelConfiguration(url: url, cloudKitDatabase: database))
            }
            #expect(error.code == .unsupportedFeature)
            #expect(error.message.contains("cloudKitDatabase"))
            #expect(error.remedy?.contains("cloudKitDatabase: .none") == true)
            #expect(error.remedy?.contains("ModelStoreSync") == true)
            #expect(!FileManager.default.fileExists(atPath: url.path))
        }
    }

    @Test func aGroupContainerSharesOneDefaultStoreUnderTheUsersDataFolder() throws {
        let directory = try TemporaryDirectory()
        let previous = ProcessInfo.processInfo.environment["XDG_DATA_HOME"]
        setenv("XDG_DATA_HOME", directory.url.path, 1)
        defer {
            if let previous { setenv("XDG_DATA_HOME", previous, 1) } else { unsetenv("XDG_DATA_HOME") }
        }
        let group = "group.com.example.trips"
        let url = ModelConfiguration.groupStoreURL(identifier: group)
        #expect(url.path == directory.url.path + "/ModelStore Groups/group.com.example.trips/default.store")
        do {
            let first = try ModelContainer(
                for: Trip.self, configurations: ModelConfiguration(groupContainer: .identifier(group)))
            try addTrip("Kyoto", to: first)
        }
        #expect(FileManager.default.fileExists(atPath: url.path))
        // A second program naming the group opens the same store.
        let second = try ModelContainer(
            for: Trip.self, configurations: ModelConfiguration(groupContainer: .identifier(group)))
        #expect(try tripNames(in: second) == ["Kyoto"])
        // An identifier that is not a folder name is refused, naming it.
        let error = try #require(throws: DataStoreError.self) {
            _ = try ModelContainer(
                for: Trip.self, configurations: ModelConfiguration(groupContainer: .identifier("../elsewhere")))
        }
        #expect(error.code == .unsupportedFeature)
        #expect(error.message.contains("'../elsewhere'"))
    }
}
