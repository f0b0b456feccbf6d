// swift-tools-version: 6.1
import CompilerPluginSupport
import PackageDescription

// SwiftData's spelling for ModelStore models (`@Model`, `@Attribute`, `@Relationship`, `@Transient`,
// `#Unique`, `#Index`, `@ModelActor`), as a package of its own so that apps which write their models
// by hand never resolve or build swift-syntax.
let package = Package(
    name: "ModelStoreMacros",
    platforms: [.macOS(.v15), .iOS(.v18)],
    products: [
        .library(name: "ModelStoreMacros", targets: ["ModelStoreMacros"]),
        .executable(name: "trips-macro", targets: ["TripsMacro"]),
        .executable(name: "modelstore-macro-bench", targets: ["MacroBench"]),
    ],
    dependencies: [
        .package(name: "ModelStore", path: ".."),
        .package(url: "https://github.com/swiftlang/swift-syntax", from: "603.0.1"),
    ],
    targets: [
        // The compiler plug-in: the macros' expansions and diagnostics.
        .macro(
            name: "ModelStoreMacrosPlugin",
            dependencies: [
                .product(name: "SwiftSyntax", package: "swift-syntax"),
                .product(name: "SwiftSyntaxMacros", package: "swift-syntax"),
                .product(name: "SwiftCompilerPlugin", package: "swift-syntax"),
                .product(name: "SwiftDiagnostics", package: "swift-syntax"),
            ]),
        // What an app imports: the macro declarations, and ModelStore itself.
        .target(
            name: "ModelStoreMacros",
            dependencies: [
                "ModelStoreMacrosPlugin",
                .product(name: "ModelStore", package: "ModelStore"),
            ]),
        // Golden expansion and diagnostic tests of the plug-in.
        .testTarget(
            name: "ModelStoreMacrosPluginTests",
            dependencies: [
                "ModelStoreMacrosPlugin",
                .product(name: "SwiftSyntaxMacrosGenericTestSupport", package: "swift-syntax"),
                .product(name: "SwiftSyntaxMacroExpansion", package: "swift-syntax"),
            ]),
        // Models in SwiftData's spelling, saved and fetched through every built-in store.
        .testTarget(
            name: "ModelStoreMacrosTests",
            dependencies: [
                "ModelStoreMacros",
                .product(name: "ModelStoreAdapters", package: "ModelStore"),
            ]),
        // The SwiftData app that Tests/PortedAppTests ports by hand, ported with the macros instead.
        .testTarget(
            name: "PortedAppMacroTests",
            dependencies: [
                "ModelStoreMacros",
                .product(name: "ModelStoreAdapters", package: "ModelStore"),
            ]),
        // The Trips sample with its models in SwiftData's spelling: App/ links the sample's other
        // files, so only Models.swift differs; `trips-macro` runs it.
        .target(
            name: "TripsMacroSample",
            dependencies: ["ModelStoreMacros", .product(name: "ModelStoreAdapters", package: "ModelStore")],
            path: "Samples/TripsMacro/App"),
        .executableTarget(
            name: "TripsMacro", dependencies: ["TripsMacroSample"], path: "Samples/TripsMacro", exclude: ["App"]),
        // Runs `trips` and `trips-macro` on the same command lines on every store: same output.
        .testTarget(
            name: "TripsMacroTests",
            dependencies: ["TripsMacro", .product(name: "trips", package: "ModelStore")]),
        // The main benchmarks' `inmemory` insert and fetch-all, with the user written by hand and with
        // `@Model`, side by side in one process: here, so benchmark CI never builds swift-syntax.
        .executableTarget(
            name: "MacroBench",
            dependencies: ["ModelStoreMacros", .product(name: "ModelStoreAdapters", package: "ModelStore")],
            path: "Benchmarks/MacroBench"),
    ]
)
