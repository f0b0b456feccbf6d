import Foundation
import ModelStore
import ModelStoreAdapterKit
import ModelStoreAdapters
import ModelStoreAppendLog
import ModelStoreInMemory
import ModelStoreJSONFile
import ModelStoreSQLite
import ModelStoreTestSupport
import Testing

struct StoreRegistryTests {
    /// A registry with the built-in schemes, of its own so tests don't share state.
    private func builtIns() -> StoreRegistry {
        let registry = StoreRegistry()
        registry.registerBuiltInSchemes()
        return registry
    }

    private func error(_ body: () throws -> Any) throws -> DataStoreError {
        try #require(throws: DataStoreError.self) { _ = try body() }
    }

    /// `page-cache-mib` sets the SQLite store's page cache in MiB; anything but a whole number of
    /// MiB is refused with the option's name.
    @Test func theURLSetsTheSizeInMiBAndRefusesAnythingElse() throws {
        let registry = builtIns()
        let path = "/tmp/a/trips.sqlite"
        let configuration = try #require(
            try registry.configuration(for: "sqlite:\(path)?page-cache-mib=24") as? SQLiteStoreConfiguration)
        #expect(configuration.pageCacheSize == 24 << 20)
        let unset = try #require(try registry.configuration(for: "sqlite:\(path)") as? SQLiteStoreConfiguration)
        #expect(unset.pageCacheSize == nil)
        for bad in ["-1", "big", "1.5", ""] {
            let error = try #require(throws: DataStoreError.self) {
                try registry.configuration(for: "sqlite:\(path)?page-cache-mib=\(bad)")
            }
            #expect(error.code == .invalidConfiguration)
            #expect(error.message.contains("page-cache-mib"))
        }
    }

    @Test func jsonAndLogSchemesMakeTheirConfigurations() throws {
        let registry = builtIns()
        let json = try #require(
            try registry.configuration(for: "json:/tmp/a/trips.json") as? JSONFileStoreConfiguration)
        #expect(json.url.path == "/tmp/a/trips.json")
        #expect(json.keepsBackup)
        let noBackup = try registry.configuration(for: "json:/tmp/a/trips.json?backup=false")
        #expect((noBackup as? JSONFileStoreConfiguration)?.keepsBackup == false)
        let log = try #require(try registry.configuration(for: "log:/tmp/a/log") as? AppendLogStoreConfiguration)
        #expect(log.directory.path == "/tmp/a/log")
        #expect(log.durability == .batched)
        #expect(log.compaction == .default)
        let tuned = try #require(
            try registry.configuration(for: "log:/tmp/a/log?durability=everySave&compaction=manual")
                as? AppendLogStoreConfiguration)
        #expect(tuned.durability == .everySave)
        #expect(tuned.compaction == .manual)
        let error = try error { try registry.configuration(for: "log:/tmp/a/log?durability=always") }
        #expect(error.remedy == "Use one of: 'none', 'batched', 'everySave'")
    }

    @Test func memorySchemeMakesAnInMemoryConfiguration() throws {
        let registry = builtIns()
        let configuration = try #require(try registry.configuration(for: "memory:") as? InMemoryStoreConfiguration)
        #expect(configuration.name == "memory" && !configuration.isShared)
        let named = try #require(try registry.configuration(for: "memory:scratch") as? InMemoryStoreConfiguration)
        #expect(named.name == "scratch" && named.isShared)
    }

    @Test func builtInSchemesAreListedByName() {
        #expect(builtIns().schemes.map(\.name) == ["json", "log", "memory", "sqlite"])
    }

    @Test func sqliteSchemeNamesAFileOrAnInMemoryDatabase() throws {
        let registry = builtIns()
        let file = try #require(
            try registry.configuration(for: "sqlite:trips.sqlite?durability=everySave") as? SQLiteStoreConfiguration)
        #expect(file.url?.lastPathComponent == "trips.sqlite")
        #expect(file.durability == .everySave)
        let memory = try #require(try registry.configuration(for: "sqlite::memory:") as? SQLiteStoreConfiguration)
        #expect(memory.url == nil)
        #expect(memory.durability == .batched)
    }

    @Test func unknownSchemeNamesTheStringAndListsTheRegisteredSchemes() throws {
        let error = try error { try builtIns().configuration(for: "jsn:trips.json") }
        #expect(error.code == .invalidConfiguration)
        #expect(error.message == "the store URL 'jsn:trips.json' uses the scheme 'jsn:', which is not registered")
        #expect(error.remedy?.contains("'memory:[NAME]' (in memory, nothing saved to disk)") == true)
    }

    @Test func anEmptyRegistrySaysHowToRegisterTheBuiltIns() throws {
        let error = try error { try StoreRegistry().configuration(for: "memory:") }
        #expect(error.remedy?.contains("registerBuiltInSchemes()") == true)
    }

    @Test func malformedStringsAlsoListTheRegisteredSchemes() throws {
        let error = try error { try builtIns().configuration(for: "trips.json") }
        #expect(error.message == "the store URL 'trips.json' does not start with a scheme")
        #expect(error.remedy?.contains("Registered schemes: ") == true)
        #expect(error.remedy?.contains("'json:PATH[?backup=true|false]'") == true)
    }

    @Test func aSchemeWithoutLocationRejectsOne() throws {
        let registry = StoreRegistry()
        registry.register(
            StoreScheme("scratch", summary: "a test store", location: .none, example: "scratch:") { _ in
                InMemoryStoreConfiguration()
            })
        let error = try error { try registry.configuration(for: "scratch:somewhere") }
        #expect(error.message == "the store URL 'scratch:somewhere' has a location, but 'scratch:' takes none")
        #expect(error.remedy == "Write 'scratch:', for example 'scratch:'")
    }

    @Test func aSchemeThatNeedsALocationSaysSo() throws {
        let registry = StoreRegistry()
        registry.register(Self.fileScheme)
        let error = try error { try registry.configuration(for: "file:") }
        #expect(error.message == "the store URL 'file:' needs a PATH after 'file:'")
        #expect(error.remedy == "Write 'file:PATH[?mode=fast|safe&label=VALUE]', for example 'file:data.bin'")
    }

    @Test func unknownOptionsAndValuesAreRejectedWithTheAcceptedOnes() throws {
        let registry = StoreRegistry()
        registry.register(Self.fileScheme)
        let unknown = try error { try registry.configuration(for: "file:x?speed=fast") }
        #expect(unknown.message == "the store URL 'file:x?speed=fast' has the unknown option 'speed'")
        #expect(unknown.remedy == "Remove it; 'file:' takes 'mode' (how hard to sync), 'label' (a name)")
        let value = try error { try registry.configuration(for: "file:x?mode=reckless") }
        #expect(
            value.message
                == "the store URL 'file:x?mode=reckless' sets the option 'mode' to 'reckless', which it does not accept"
        )
        #expect(value.remedy == "Use one of: 'fast', 'safe'")
        _ = try registry.configuration(for: "file:x?mode=safe&label=anything")
    }

    @Test func theFactorySeesTheCheckedURL() throws {
        let registry = StoreRegistry()
        registry.register(Self.fileScheme)
        let configuration = try #require(
            try registry.configuration(for: "FILE:data.bin?label=mine") as? InMemoryStoreConfiguration)
        #expect(configuration.name == "data.bin|mine")
    }

    @Test func registeringAgainReplacesUnlessAskedToKeep() throws {
        let registry = StoreRegistry()
        registry.register(
            StoreScheme("memory", summary: "mine", location: .optional("NAME"), example: "memory:") { _ in
                InMemoryStoreConfiguration(name: "mine")
            })
        registry.registerBuiltInSchemes()
        #expect(registry.scheme(named: "memory")?.summary == "mine")
        registry.register(.memory)
        #expect(registry.scheme(named: "MEMORY")?.summary == "in memory, nothing saved to disk")
        #expect(registry.unregister("memory"))
        #expect(registry.scheme(named: "memory") == nil)
    }

    @Test func theEnvironmentVariableOverridesTheURL() throws {
        let registry = builtIns()
        let configuration = try registry.configuration(
            for: "jsn:broken", overriddenBy: "MODELSTORE_URL",
            environment: ["MODELSTORE_URL": "memory:from-environment"])
        #expect((configuration as? InMemoryStoreConfiguration)?.name == "from-environment")
        #expect(StoreRegistry.resolve("json:a.json", environment: [:]) == ("json:a.json", false))
        #expect(StoreRegistry.resolve("json:a.json", environment: ["MODELSTORE_URL": "  "]) == ("json:a.json", false))
        #expect(StoreRegistry.resolve("json:a.json", environment: ["MODELSTORE_URL": "memory:"]) == ("memory:", true))
    }

    @Test func anErrorInTheEnvironmentsURLSaysWhereItCameFrom() throws {
        let error = try error {
            try builtIns().configuration(
                for: "memory:", overriddenBy: "MODELSTORE_URL", environment: ["MODELSTORE_URL": "nope:x"])
        }
        #expect(error.message.hasSuffix("(set by the environment variable 'MODELSTORE_URL')"))
        #expect(error.message.contains("'nope:x'"))
    }

    @Test(.urlNotOverridden) func aContainerOpensFromAURL() throws {
        let registry = builtIns()
        let container = try ModelContainer(for: Trip.self, url: "memory:", registry: registry)
        #expect(container.configurations.first is InMemoryStoreConfiguration)
        let context = ModelContext(container)
        context.insert(Trip(name: "Porto", start: .now))
        try context.save()
        #expect(try context.fetchCount(FetchDescriptor<Trip>()) == 1)
    }

    @Test(.urlNotOverridden) func theAdaptersModuleRegistersTheBuiltInsForTheSharedRegistry() throws {
        let container = try ModelContainer(for: Trip.self, url: "memory:")
        #expect(container.configurations.first is InMemoryStoreConfiguration)
        #expect(StoreRegistry.shared.scheme(named: "memory") != nil)
    }

    @Test(.urlNotOverridden) func aBadURLFailsTheContainerWithTheSameError() throws {
        let error = try error { try ModelContainer(for: Trip.self, url: "memory:?fast=yes") }
        #expect(error.message == "the store URL 'memory:?fast=yes' has the unknown option 'fast'")
    }

    @Test func usageDescribesLocationAndOptions() {
        #expect(Self.fileScheme.usage == "file:PATH[?mode=fast|safe&label=VALUE]")
        #expect(StoreScheme.memory.usage == "memory:[NAME]")
    }

    /// A scheme with a required location and two options, built on the in-memory store.
    static let fileScheme = StoreScheme(
        "file", summary: "a test file", location: .required("PATH"),
        options: [
            .init("mode", allowedValues: ["fast", "safe"], summary: "how hard to sync"),
            .init("label", summary: "a name"),
        ],
        example: "file:data.bin"
    ) { url in
        InMemoryStoreConfiguration(name: url.location + "|" + (url.option("label") ?? ""))
    }
}
