// swift-tools-version: 6.1
import PackageDescription

// The server side of ModelStore in its own package, so that the main package stays dependency-free:
// ModelStore Studio (a store browser served over HTTP) now, and the sync server later, sharing one build
// of Hummingbird and SwiftNIO.
let package = Package(
    name: "ModelStoreServer",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "ModelStoreStudio", targets: ["ModelStoreStudio"]),
        .executable(name: "modelstore-studio", targets: ["modelstore-studio"]),
    ],
    dependencies: [
        .package(name: "ModelStore", path: ".."),
        .package(name: "ModelStorePostgreSQL", path: "../Adapters/PostgreSQL"),
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
    ],
    targets: [
        // The store browser: opens any store by URL through its recorded schema and serves its pages.
        .target(
            name: "ModelStoreStudio",
            dependencies: [
                .product(name: "ModelStore", package: "ModelStore"),
                .product(name: "ModelStoreAdapters", package: "ModelStore"),
                .product(name: "ModelStoreTooling", package: "ModelStore"),
                .product(name: "ModelStoreSync", package: "ModelStore"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            path: "Sources/ModelStoreStudio"),
        // `modelstore-studio URL [--host H] [--port N] [--write]`, with the PostgreSQL adapter linked so that
        // it opens `postgres://` stores too (the library leaves the choice of adapters to the app).
        .executableTarget(
            name: "modelstore-studio",
            dependencies: [
                "ModelStoreStudio", .product(name: "ModelStore", package: "ModelStore"),
                .product(name: "ModelStorePostgreSQL", package: "ModelStorePostgreSQL"),
            ],
            path: "Sources/modelstore-studio"),
        // Writes the stores the tests and the speed script browse, and changes them from another process.
        .executableTarget(
            name: "studio-fixture",
            dependencies: [
                .product(name: "ModelStore", package: "ModelStore"),
                .product(name: "ModelStoreAdapters", package: "ModelStore"),
                .product(name: "ModelStorePostgreSQL", package: "ModelStorePostgreSQL"),
            ],
            path: "Sources/studio-fixture"),
        .testTarget(
            name: "ModelStoreStudioTests",
            dependencies: [
                "ModelStoreStudio",
                .product(name: "ModelStore", package: "ModelStore"),
                .product(name: "ModelStoreAdapters", package: "ModelStore"),
                .product(name: "ModelStorePostgreSQL", package: "ModelStorePostgreSQL"),
                .product(name: "ModelStoreSync", package: "ModelStore"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
            ],
            path: "Tests/ModelStoreStudioTests"),
    ],
    swiftLanguageModes: [.v6]
)
