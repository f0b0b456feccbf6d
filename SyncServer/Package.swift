// swift-tools-version: 6.1
import PackageDescription

// The sync server in its own package, so that the main package stays dependency-free: the sync
// engine's change sets over HTTP, on Hummingbird, with PostgreSQL (the adapter's package) as the one
// shared store, its LISTEN/NOTIFY (PostgresNIO) waking every server process's live channel, and
// bearer JWTs (jwt-kit) deciding who sees what; HTTPS optional (HummingbirdTLS over swift-nio-ssl,
// which postgres-nio already builds).
let package = Package(
    name: "ModelStoreSyncServer",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "ModelStoreSyncServer", targets: ["ModelStoreSyncServer"]),
        .executable(name: "modelstore-sync-server", targets: ["modelstore-sync-server"]),
    ],
    dependencies: [
        .package(name: "ModelStore", path: ".."),
        .package(name: "ModelStorePostgreSQL", path: "../Adapters/PostgreSQL"),
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
        .package(url: "https://github.com/vapor/jwt-kit", from: "5.7.1"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/vapor/postgres-nio", from: "1.33.2"),
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.37.6"),
    ],
    targets: [
        // Reading and checking request bodies, without HTTP, so the fuzz target builds without NIO.
        .target(
            name: "ModelStoreSyncRequests",
            dependencies: [
                .product(name: "ModelStore", package: "ModelStore"),
                .product(name: "ModelStoreSync", package: "ModelStore"),
            ],
            path: "Sources/ModelStoreSyncRequests"),
        // The routes (mountable in any Hummingbird app), token verification, scopes and limits.
        .target(
            name: "ModelStoreSyncServer",
            dependencies: [
                "ModelStoreSyncRequests",
                .product(name: "ModelStore", package: "ModelStore"),
                .product(name: "ModelStoreSync", package: "ModelStore"),
                .product(name: "ModelStoreTooling", package: "ModelStore"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "HummingbirdTLS", package: "hummingbird"),
                .product(name: "JWTKit", package: "jwt-kit"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "ModelStorePostgreSQL", package: "ModelStorePostgreSQL"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ],
            path: "Sources/ModelStoreSyncServer"),
        // `modelstore-sync-server --store postgres://… --jwt-key-file F [--port N] [--scope-attribute A]`.
        .executableTarget(
            name: "modelstore-sync-server",
            dependencies: [
                "ModelStoreSyncServer",
                .product(name: "ModelStorePostgreSQL", package: "ModelStorePostgreSQL"),
                .product(name: "ModelStoreAdapters", package: "ModelStore"),
            ],
            path: "Sources/modelstore-sync-server"),
        // The model the tests sync, and a client process for tests that run clients in other
        // network namespaces or kill them.
        .target(
            name: "SyncTestModels",
            dependencies: [
                .product(name: "ModelStore", package: "ModelStore"),
                .product(name: "ModelStoreSync", package: "ModelStore"),
                .product(name: "ModelStoreAdapters", package: "ModelStore"),
            ],
            path: "Sources/SyncTestModels"),
        .executableTarget(
            name: "sync-test-client", dependencies: ["SyncTestModels"], path: "Sources/sync-test-client"),
        // The load run: clients on local SQLite stores saving and syncing through two server processes.
        .executableTarget(
            name: "modelstore-sync-load",
            dependencies: ["ModelStoreSyncServer", "SyncTestModels", "modelstore-sync-server"],
            path: "Sources/modelstore-sync-load"),
        // The first sync of a replica over HTTP, change sets packed and as JSON arrays, side by side.
        .executableTarget(
            name: "modelstore-sync-first",
            dependencies: ["ModelStoreSyncServer", "SyncTestModels", "modelstore-sync-server"],
            path: "Sources/modelstore-sync-first"),
        // The request decoder's fuzz target: libFuzzer's driver when built with -DMODELSTORE_FUZZING
        // (scripts/fuzz-syncserver.sh), otherwise a seeded mutation runner and a replayer.
        .executableTarget(
            name: "modelstore-sync-fuzz", dependencies: ["ModelStoreSyncRequests", "SyncTestModels"],
            path: "Sources/modelstore-sync-fuzz"),
        .testTarget(
            name: "ModelStoreSyncServerTests",
            dependencies: [
                "ModelStoreSyncServer", "ModelStoreSyncRequests", "SyncTestModels", "modelstore-sync-server",
                "sync-test-client",
                .product(name: "ModelStore", package: "ModelStore"),
                .product(name: "ModelStoreSync", package: "ModelStore"),
                .product(name: "ModelStoreAdapters", package: "ModelStore"),
                .product(name: "ModelStorePostgreSQL", package: "ModelStorePostgreSQL"),
                .product(name: "JWTKit", package: "jwt-kit"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
            ],
            path: "Tests/ModelStoreSyncServerTests"),
    ],
    swiftLanguageModes: [.v6]
)
