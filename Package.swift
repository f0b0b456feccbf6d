// swift-tools-version: 6.1
import PackageDescription

let package = Package(
    name: "ModelStore",
    platforms: [.macOS(.v15), .iOS(.v18)],
    products: [
        .library(name: "ModelStore", targets: ["ModelStore"]),
        .library(name: "ModelStoreAdapterKit", targets: ["ModelStoreAdapterKit"]),
        .library(name: "ModelStoreTooling", targets: ["ModelStoreTooling"]),
        .library(name: "ModelStoreInMemory", targets: ["ModelStoreInMemory"]),
        .library(name: "ModelStoreJSONFile", targets: ["ModelStoreJSONFile"]),
        .library(name: "ModelStoreAppendLog", targets: ["ModelStoreAppendLog"]),
        .library(name: "ModelStoreSQLite", targets: ["ModelStoreSQLite"]),
        .library(name: "ModelStoreFileIO", targets: ["ModelStoreFileIO"]),
        .library(name: "ModelStoreCrypto", targets: ["ModelStoreCrypto"]),
        .library(name: "ModelStoreAdapters", targets: ["ModelStoreAdapters"]),
        .library(name: "ModelStoreConformance", targets: ["ModelStoreConformance"]),
        .library(name: "ModelStoreSync", targets: ["ModelStoreSync"]),
        .library(name: "ModelStoreCommandLine", targets: ["ModelStoreCommandLine"]),
        // Test models and the plain-Swift model of the merge, shared by the sync tests of this package and
        // of the PostgreSQL package; not API.
        .library(name: "ModelStoreSyncTestSupport", targets: ["ModelStoreSyncTestSupport"]),
        .executable(name: "modelstore", targets: ["ModelStoreTool"]),
        .executable(name: "trips", targets: ["Trips"]),
        .library(name: "TripsSample", targets: ["TripsSample"]),
    ],
    targets: [
        // The core: models, schema, snapshots, the DataStore protocols, container, context, queries.
        .target(name: "ModelStore", path: "Sources/ModelStore"),
        // What adapters build on: the table engine, the snapshot evaluator, store history records, the
        // migration runner and identifier minting.
        .target(name: "ModelStoreAdapterKit", dependencies: ["ModelStore"], path: "Sources/ModelStoreAdapterKit"),
        // What tools build on: the maintenance protocol each adapter implements for its scheme, its
        // report types and text helpers, store references opened without model types, and the schema
        // documents, diff, model-code and migration-plan writers and package export of the schema tools.
        .target(
            name: "ModelStoreTooling", dependencies: ["ModelStore"], path: "Sources/ModelStoreTooling",
            plugins: ["EmbedSchemaExportSupport"]),
        // The files of the driver that `schema export --package` writes, compiled and tested here; the plugin,
        // with the executable it runs, hands their text to ModelStoreTooling when the package builds.
        .target(
            name: "ModelStoreSchemaExportSupport", dependencies: ["ModelStore"],
            path: "Sources/ModelStoreSchemaExportSupport"),
        .executableTarget(name: "ModelStoreSourceEmbedder", path: "Sources/ModelStoreSourceEmbedder"),
        .plugin(
            name: "EmbedSchemaExportSupport", capability: .buildTool(), dependencies: ["ModelStoreSourceEmbedder"],
            path: "Plugins/EmbedSchemaExportSupport"),
        // Durable file I/O shared by the file stores, public for adapter authors.
        .target(
            name: "ModelStoreFileIO", dependencies: ["ModelStore", "CModelStoreCRC32C"],
            path: "Sources/ModelStoreFileIO"),
        // OpenSSL's libcrypto, as the system provides it (Debian: libssl-dev; scripts/install-deps.sh installs
        // it), and the key handling and authenticated encryption the file stores use, public for adapter authors.
        .systemLibrary(
            name: "CModelStoreCrypto", path: "Sources/CModelStoreCrypto",
            providers: [.apt(["libssl-dev"]), .brew(["openssl@3"])]),
        .target(
            name: "ModelStoreCrypto", dependencies: ["ModelStore", "CModelStoreCrypto"],
            path: "Sources/ModelStoreCrypto"),
        // CRC-32C with the processor's instruction, which ModelStoreFileIO's CRC32C uses where there is one.
        .target(name: "CModelStoreCRC32C", path: "Sources/CModelStoreCRC32C"),
        // Adapters, one module each.
        .target(
            name: "ModelStoreInMemory", dependencies: ["ModelStore", "ModelStoreAdapterKit"], path: "Adapters/InMemory"),
        .target(
            name: "ModelStoreJSONFile",
            dependencies: [
                "ModelStore", "ModelStoreAdapterKit", "ModelStoreFileIO", "ModelStoreTooling", "ModelStoreCrypto",
            ],
            path: "Adapters/JSONFile",
            exclude: ["FORMAT.md"]),  // the file format, bound for the DocC catalog
        .target(
            name: "ModelStoreAppendLog",
            dependencies: [
                "ModelStore", "ModelStoreAdapterKit", "ModelStoreFileIO", "ModelStoreTooling", "ModelStoreCrypto",
            ],
            path: "Adapters/AppendLog",
            exclude: ["FORMAT.md"]),  // the file format, bound for the DocC catalog
        // SQLite's C library, as the system provides it (Debian: libsqlite3-dev), and the adapter over it.
        .systemLibrary(
            name: "CSQLite", path: "Adapters/SQLite/CSQLite",
            providers: [.apt(["libsqlite3-dev"]), .brew(["sqlite"])]),
        // The page cipher: a VFS over SQLite's default one that seals every page of the database, its
        // write-ahead log and its journal with AES-256-GCM from libcrypto.
        .target(
            name: "CModelStoreSQLiteCipher", path: "Sources/CModelStoreSQLiteCipher",
            linkerSettings: [.linkedLibrary("sqlite3"), .linkedLibrary("crypto")]),
        // Reads a row's columns and its checksum in one call, and computes the checksum column.
        .target(
            name: "CModelStoreSQLiteRows", path: "Sources/CModelStoreSQLiteRows",
            linkerSettings: [.linkedLibrary("sqlite3")]),
        .target(
            name: "ModelStoreSQLite",
            dependencies: [
                "ModelStore", "ModelStoreAdapterKit", "ModelStoreFileIO", "ModelStoreTooling", "CSQLite",
                "CModelStoreSQLiteCipher", "CModelStoreSQLiteRows", "ModelStoreCrypto",
            ],
            path: "Adapters/SQLite", exclude: ["CSQLite", "FORMAT.md"]),
        // Registers the built-in adapters' URL schemes (memory:, json:, log:, sqlite:) and the default
        // store when a program that links it starts (the C target is the load hook), and SwiftData's
        // ModelConfiguration.
        .target(name: "CModelStoreAdaptersLoad", path: "Sources/CModelStoreAdaptersLoad"),
        .target(
            name: "ModelStoreAdapters",
            dependencies: [
                "CModelStoreAdaptersLoad", "ModelStore", "ModelStoreInMemory", "ModelStoreJSONFile",
                "ModelStoreAppendLog", "ModelStoreSQLite", "ModelStoreTooling", "ModelStoreFileIO", "ModelStoreCrypto",
            ],
            path: "Sources/ModelStoreAdapters"),
        // The conformance suite any adapter runs with one test.
        .target(
            name: "ModelStoreConformance", dependencies: ["ModelStore", "ModelStoreAdapterKit"],
            path: "Sources/ModelStoreConformance",
            exclude: ["RUNNING.md", "WRITING-AN-ADAPTER.md"]),  // article drafts, bound for the DocC catalog
        // Sync between a local store and a remote one: the engine, the host a remote runs, and the
        // in-process transport.
        .target(
            name: "ModelStoreSync", dependencies: ["ModelStore", "ModelStoreAdapterKit"], path: "Sources/ModelStoreSync"
        ),
        // The command-line tool's commands, in a library so that a package that links more adapters (the
        // PostgreSQL package) builds the same tool with their schemes registered; it reaches the adapters
        // through their schemes only.
        .target(
            name: "ModelStoreCommandLine",
            dependencies: [
                "ModelStore", "ModelStoreAdapterKit", "ModelStoreAdapters", "ModelStoreTooling", "ModelStoreSync",
            ],
            path: "Sources/ModelStoreCommandLine"),
        // `modelstore`: the commands above over the built-in adapters.
        .executableTarget(
            name: "ModelStoreTool", dependencies: ["ModelStoreCommandLine"], path: "Sources/ModelStoreTool"),
        // The crash test's writer and checker (scripts/crash-test.sh).
        .executableTarget(
            name: "ModelStoreCrashTest", dependencies: ["ModelStore", "ModelStoreAdapters", "ModelStoreAppendLog"],
            path: "Sources/modelstore-crash"),
        // The sync crash test's replica process and checker (scripts/sync-crash-test.sh).
        .executableTarget(
            name: "ModelStoreSyncCrashTest", dependencies: ["ModelStore", "ModelStoreAdapters", "ModelStoreSync"],
            path: "Sources/modelstore-sync-crash"),
        // The fuzz targets (scripts/fuzz.sh builds them with libFuzzer; otherwise they replay inputs).
        .executableTarget(
            name: "ModelStoreFuzz",
            dependencies: ["ModelStore", "ModelStoreAdapters", "ModelStoreJSONFile", "ModelStoreAppendLog"],
            path: "Sources/modelstore-fuzz"),
        // Samples.
        // The trip planner: its logic in a library (so a package that links more stores can run it too),
        // and the `trips` executable that runs it.
        .target(name: "TripsSample", dependencies: ["ModelStore", "ModelStoreAdapters"], path: "Samples/Trips/App"),
        .executableTarget(name: "Trips", dependencies: ["TripsSample"], path: "Samples/Trips", exclude: ["App"]),
        .target(
            name: "CustomAdapterSample", dependencies: ["ModelStore", "ModelStoreAdapterKit", "ModelStoreTooling"],
            path: "Samples/CustomAdapter/Sources"),
        // Tests, and the helpers they share (temporary folders, a seeded generator, error checks, running the
        // package's executables and `modelstore` over a seeded library, a store double that runs a hook before
        // each save).
        .target(
            name: "ModelStoreTestSupport",
            dependencies: ["ModelStore", "ModelStoreConformance", "ModelStoreAppendLog"],
            path: "Tests/ModelStoreTestSupport"),
        .testTarget(
            name: "ModelStoreTests",
            dependencies: [
                "ModelStore", "ModelStoreAdapterKit", "ModelStoreInMemory", "ModelStoreTestSupport",
                "ModelStoreTooling",
            ]),
        .target(
            name: "ModelStoreSyncTestSupport",
            dependencies: ["ModelStore", "ModelStoreSync", "ModelStoreAdapters", "ModelStoreTestSupport"],
            path: "Tests/ModelStoreSyncTestSupport"),
        .testTarget(
            name: "ModelStoreSyncTests",
            dependencies: [
                "ModelStore", "ModelStoreSync", "ModelStoreAdapters", "ModelStoreTestSupport",
                "ModelStoreSyncTestSupport",
                // Run by the crash test, so built with the tests.
                "ModelStoreSyncCrashTest",
            ]),
        .testTarget(
            name: "ModelStoreCryptoTests", dependencies: ["ModelStore", "ModelStoreCrypto", "ModelStoreTestSupport"]),
        .testTarget(
            name: "ModelStoreGraphTests",
            dependencies: [
                "ModelStore", "ModelStoreAdapterKit", "ModelStoreInMemory", "ModelStoreJSONFile", "ModelStoreAppendLog",
                "ModelStoreSQLite",
                "ModelStoreTestSupport",
            ]),
        .testTarget(
            name: "ModelStoreJSONFileTests",
            dependencies: [
                "ModelStore", "ModelStoreAdapterKit", "ModelStoreJSONFile", "ModelStoreFileIO", "ModelStoreConformance",
                "ModelStoreTestSupport", "ModelStoreCrypto",
            ]),
        .testTarget(
            name: "ModelStoreAppendLogTests",
            dependencies: [
                "ModelStore", "ModelStoreAdapterKit", "ModelStoreAppendLog", "ModelStoreFileIO",
                "ModelStoreConformance", "ModelStoreCrypto",
                "ModelStoreTestSupport",
            ]),
        .testTarget(
            name: "ModelStoreSQLiteTests",
            dependencies: [
                "ModelStore", "ModelStoreAdapterKit", "ModelStoreSQLite", "ModelStoreConformance", "CSQLite",
                "ModelStoreTestSupport", "CModelStoreSQLiteCipher", "CModelStoreSQLiteRows", "ModelStoreCrypto",
            ]),
        .testTarget(
            name: "ModelStoreConformanceTests",
            dependencies: [
                "ModelStore", "ModelStoreAdapterKit", "ModelStoreInMemory", "ModelStoreConformance",
                "ModelStoreTestSupport",
            ]),
        // The `modelstore` command line, run as a user runs it.
        .testTarget(
            name: "ModelStoreToolTests",
            dependencies: [
                "ModelStore", "ModelStoreAdapters", "ModelStoreAppendLog", "ModelStoreJSONFile", "ModelStoreSQLite",
                "ModelStoreCrypto", "ModelStoreTestSupport", "ModelStoreTooling",
            ]),
        // The built-in stores together, as ModelStoreAdapters registers them: URLs and the registry, SwiftData's
        // ModelConfiguration, the README's quick start, read-only stores, conflicts, corruption, file modes,
        // resources and fuzz regressions.
        .testTarget(
            name: "ModelStoreAdaptersTests",
            dependencies: [
                "ModelStore", "ModelStoreAdapterKit", "ModelStoreAdapters", "ModelStoreInMemory", "ModelStoreJSONFile",
                "ModelStoreAppendLog", "ModelStoreSQLite", "ModelStoreConformance", "ModelStoreTestSupport",
                "ModelStoreCrypto", "ModelStoreSync",
            ]),
        // The trip planner sample, driven through its `trips` executable.
        .testTarget(name: "TripsSampleTests", dependencies: ["ModelStoreTestSupport"]),
        // A small SwiftData app's model and query code ported to ModelStore and run; the lines the port changed are
        // counted against the SwiftData original (SwiftDataOriginal/, kept as text) and quoted in the README.
        .testTarget(
            name: "PortedAppTests", dependencies: ["ModelStore", "ModelStoreAdapters"], exclude: ["SwiftDataOriginal"]),
        // The schema tools' golden files (generated models and plan, compiled here) and their tests.
        .testTarget(
            name: "SchemaToolTests",
            dependencies: [
                "ModelStore", "ModelStoreCommandLine", "ModelStoreTestSupport", "ModelStoreTooling",
                "ModelStoreSchemaExportSupport",
            ],
            exclude: ["Fixtures"]),
        .testTarget(
            name: "CustomAdapterSampleTests",
            dependencies: [
                "CustomAdapterSample", "ModelStore", "ModelStoreAdapterKit", "ModelStoreConformance",
                "ModelStoreTestSupport", "ModelStoreTooling",
            ],
            path: "Samples/CustomAdapter/Tests"),
    ],
    swiftLanguageModes: [.v6]
)

// Upcoming language features, as swift-log turns them on: `any` spelled out for every existential,
// and a file sees only the members of the modules it imports itself.
for target in package.targets where target.type != .system && target.type != .plugin {
    target.swiftSettings =
        (target.swiftSettings ?? []) + [
            .enableUpcomingFeature("ExistentialAny"), .enableUpcomingFeature("MemberImportVisibility"),
        ]
}

// The thread sanitizer's build (scripts/sanitize.sh) compiles the whole package again, instrumented, to run the
// concurrency tests, which live in a few test targets. It names them in MODELSTORE_TEST_TARGETS (comma-separated),
// and the other test targets leave the package for that build: their instrumented compile was time CI spent on
// tests it does not run there. Unset, as in `swift test`, every test target stays.
if let kept = Context.environment["MODELSTORE_TEST_TARGETS"].map({ Set($0.split(separator: ",").map(String.init)) }) {
    package.targets.removeAll { $0.type == .test && !kept.contains($0.name) }
}
