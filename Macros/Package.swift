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
        .library(name: "ModelStoreMacros", targets: ["ModelStoreMacros"])
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
    ]
)
