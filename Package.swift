// swift-tools-version: 6.1
import PackageDescription

let package = Package(
    name: "ModelStore",
    platforms: [.macOS(.v15), .iOS(.v18)],
    products: [
        .library(name: "ModelStore", targets: ["ModelStore"]),
        .library(name: "ModelStoreInMemory", targets: ["ModelStoreInMemory"]),
        .library(name: "ModelStoreJSONFile", targets: ["ModelStoreJSONFile"]),
        .library(name: "ModelStoreAppendLog", targets: ["ModelStoreAppendLog"]),
        .library(name: "ModelStoreConformance", targets: ["ModelStoreConformance"]),
    ],
    targets: [
        .target(name: "ModelStore", path: "Sources/ModelStore"),
        .target(name: "ModelStoreInMemory", dependencies: ["ModelStore"], path: "Adapters/InMemory"),
        .target(name: "ModelStoreJSONFile", dependencies: ["ModelStore"], path: "Adapters/JSONFile"),
        .target(name: "ModelStoreAppendLog", dependencies: ["ModelStore"], path: "Adapters/AppendLog"),
        .target(name: "ModelStoreConformance", dependencies: ["ModelStore"], path: "Sources/ModelStoreConformance"),
        .testTarget(name: "ModelStoreTests", dependencies: ["ModelStore", "ModelStoreInMemory"]),
    ],
    swiftLanguageModes: [.v6]
)
