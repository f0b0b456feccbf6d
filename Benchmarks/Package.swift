// swift-tools-version: 6.1
import PackageDescription

// The benchmarks live in their own package so that the main package stays dependency-free.
// Build and run in release mode only:
//     swift run -c release --package-path Benchmarks modelstore-bench --quick
let package = Package(
    name: "ModelStoreBenchmarks",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "modelstore-bench", targets: ["ModelStoreBench"]),
        .library(name: "BenchHarness", targets: ["BenchHarness"]),
    ],
    dependencies: [
        .package(name: "ModelStore", path: ".."),
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
    ],
    targets: [
        // Statistics, options, child processes, goals and reports: no storage code, so it is unit-tested quickly.
        .target(name: "BenchHarness", path: "Sources/BenchHarness"),
        // SQLite's C library as the system provides it, for the baselines that call it directly.
        .systemLibrary(name: "CSQLiteRaw", path: "Sources/CSQLiteRaw", providers: [.apt(["libsqlite3-dev"])]),
        // The workloads over every system, and the command-line entry point.
        .executableTarget(
            name: "ModelStoreBench",
            dependencies: [
                "BenchHarness", "CSQLiteRaw",
                .product(name: "ModelStore", package: "ModelStore"),
                .product(name: "ModelStoreFileIO", package: "ModelStore"),
                .product(name: "ModelStoreCrypto", package: "ModelStore"),
                .product(name: "ModelStoreInMemory", package: "ModelStore"),
                .product(name: "ModelStoreJSONFile", package: "ModelStore"),
                .product(name: "ModelStoreAppendLog", package: "ModelStore"),
                .product(name: "ModelStoreSQLite", package: "ModelStore"),
                .product(name: "GRDB", package: "GRDB.swift"),
            ],
            path: "Sources/ModelStoreBench"),
        .testTarget(name: "BenchHarnessTests", dependencies: ["BenchHarness"], path: "Tests/BenchHarnessTests"),
    ],
    swiftLanguageModes: [.v6]
)
