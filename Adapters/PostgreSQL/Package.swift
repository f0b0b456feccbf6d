// swift-tools-version: 6.1
import PackageDescription

// The PostgreSQL adapter lives in its own package so that the main package stays dependency-free.
// Its tests run against a real server: `scripts/postgres.sh run -- swift test --package-path Adapters/PostgreSQL`.
let package = Package(
    name: "ModelStorePostgreSQL",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "ModelStorePostgreSQL", targets: ["ModelStorePostgreSQL"]),
        .executable(name: "trips-postgres", targets: ["trips-postgres"]),
        .executable(name: "modelstore-postgres", targets: ["ModelStorePostgreSQLTool"]),
    ],
    dependencies: [
        .package(name: "ModelStore", path: "../.."),
        .package(url: "https://github.com/vapor/postgres-nio", from: "1.33.2"),
    ],
    targets: [
        // Registers the URL schemes when a program that links the adapter starts.
        .target(name: "CModelStorePostgreSQLLoad", path: "Sources/CModelStorePostgreSQLLoad"),
        .target(
            name: "ModelStorePostgreSQL",
            dependencies: [
                "CModelStorePostgreSQLLoad",
                .product(name: "ModelStore", package: "ModelStore"),
                .product(name: "ModelStoreAdapterKit", package: "ModelStore"),
                .product(name: "ModelStoreTooling", package: "ModelStore"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
            ],
            path: "Sources/ModelStorePostgreSQL"),
        // The main package's `modelstore` tool with this adapter linked, so that `inspect`, `verify`,
        // `schema` and `convert` reach `postgres://` stores:
        // `swift run --package-path Adapters/PostgreSQL modelstore-postgres inspect postgres://…`. Named as
        // `trips-postgres` is: a product named `modelstore` here would share its path in the build directory
        // with the main package's, which is built beside it, and one would overwrite the other.
        .executableTarget(
            name: "ModelStorePostgreSQLTool",
            dependencies: [
                "ModelStorePostgreSQL", .product(name: "ModelStore", package: "ModelStore"),
                .product(name: "ModelStoreCommandLine", package: "ModelStore"),
            ],
            path: "Sources/ModelStorePostgreSQLTool"),
        // The Trips sample with this adapter linked: `MODELSTORE_URL=postgres://… swift run trips-postgres`.
        .executableTarget(
            name: "trips-postgres",
            dependencies: ["ModelStorePostgreSQL", .product(name: "TripsSample", package: "ModelStore")],
            path: "Sources/trips-postgres"),
        // The counter model the multi-process tests and the load test share, and their worker process.
        .target(
            name: "PostgreSQLTestModels", dependencies: [.product(name: "ModelStore", package: "ModelStore")],
            path: "Sources/PostgreSQLTestModels"),
        .executableTarget(
            name: "modelstore-pg-worker", dependencies: ["ModelStorePostgreSQL", "PostgreSQLTestModels"],
            path: "Sources/modelstore-pg-worker"),
        .testTarget(
            name: "ModelStorePostgreSQLTests",
            dependencies: [
                "ModelStorePostgreSQL", "PostgreSQLTestModels", "modelstore-pg-worker", "trips-postgres",
                "ModelStorePostgreSQLTool",
                .product(name: "ModelStore", package: "ModelStore"),
                .product(name: "ModelStoreAdapterKit", package: "ModelStore"),
                .product(name: "ModelStoreConformance", package: "ModelStore"),
                .product(name: "ModelStoreTooling", package: "ModelStore"),
                .product(name: "ModelStoreAdapters", package: "ModelStore"),
                .product(name: "ModelStoreCrypto", package: "ModelStore"),
                .product(name: "ModelStoreSync", package: "ModelStore"),
                .product(name: "ModelStoreSyncTestSupport", package: "ModelStore"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
            ],
            path: "Tests/ModelStorePostgreSQLTests"),
    ],
    swiftLanguageModes: [.v6]
)
