// swift-tools-version: 6.1
import PackageDescription

// ModelStore's PostgreSQL store against Fluent and raw PostgresNIO, on a throwaway server. Its own
// package, so that neither the main package nor the GRDB benchmarks depend on Fluent. Numbers come
// from a release build (a debug build runs only `--smoke`, as CI does):
//     scripts/postgres.sh run -- swift run -c release --package-path Benchmarks/PostgreSQLBenchmarks \
//         modelstore-pg-bench
let package = Package(
    name: "ModelStorePostgreSQLBenchmarks",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "modelstore-pg-bench", targets: ["PostgresBench"]),
        .executable(name: "modelstore-sync-bench", targets: ["SyncBench"]),
    ],
    dependencies: [
        .package(name: "ModelStore", path: "../.."),
        .package(name: "ModelStorePostgreSQL", path: "../../Adapters/PostgreSQL"),
        // The harness (statistics, child processes, results) of the main benchmarks.
        .package(name: "ModelStoreBenchmarks", path: ".."),
        .package(url: "https://github.com/vapor/postgres-nio", from: "1.33.2"),
        .package(url: "https://github.com/vapor/fluent-kit", from: "1.57.0"),
        .package(url: "https://github.com/vapor/fluent-postgres-driver", from: "2.14.0"),
    ],
    targets: [
        // The workloads over the three systems, and the command-line entry point. `Shared/` links the
        // main benchmarks' data set and `User` model, so both packages measure identical data.
        .executableTarget(
            name: "PostgresBench",
            dependencies: [
                .product(name: "BenchHarness", package: "ModelStoreBenchmarks"),
                .product(name: "ModelStore", package: "ModelStore"),
                .product(name: "ModelStorePostgreSQL", package: "ModelStorePostgreSQL"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "FluentKit", package: "fluent-kit"),
                .product(name: "FluentPostgresDriver", package: "fluent-postgres-driver"),
            ],
            path: "Sources/PostgresBench"),
        // The sync engine's initial sync and incremental rounds, SQLite to SQLite and SQLite to PostgreSQL.
        .executableTarget(
            name: "SyncBench",
            dependencies: [
                .product(name: "BenchHarness", package: "ModelStoreBenchmarks"),
                .product(name: "ModelStore", package: "ModelStore"),
                .product(name: "ModelStoreAdapters", package: "ModelStore"),
                .product(name: "ModelStoreSync", package: "ModelStore"),
                .product(name: "ModelStorePostgreSQL", package: "ModelStorePostgreSQL"),
                // To drop the benchmark's namespaces afterwards (`Shared/Server.swift`, linked from PostgresBench).
                .product(name: "PostgresNIO", package: "postgres-nio"),
            ],
            path: "Sources/SyncBench"),
    ],
    swiftLanguageModes: [.v6]
)
