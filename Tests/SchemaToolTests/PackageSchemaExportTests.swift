import Foundation
import ModelStore
import ModelStoreTestSupport
import Testing

@testable import ModelStoreCommandLine
@testable import ModelStoreTooling

/// `schema export --package`: the driver package it writes, the errors it gives before and after
/// building, and one real export of a package whose models are the golden ones.
struct PackageSchemaExportTests {
    private let driver = ExportDriver(
        packagePath: "/work/My App", packageIdentity: "My App", product: "AppModels", module: "App_Models",
        models: ["Project", "Library.Book"], platforms: [".macOS(\"15.0\")"])

    @Test func theDriverImportsTheTargetAndNamesOneModelPerLine() {
        let lines = driver.mainSource.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        #expect(lines.contains("import App_Models"))
        #expect(lines[ExportDriver.firstModelLine - 1] == "    App_Models.Project.self,")
        #expect(lines[ExportDriver.firstModelLine] == "    App_Models.Library.Book.self,")
        #expect(driver.model(atLine: ExportDriver.firstModelLine + 1) == "Library.Book")
        #expect(driver.model(atLine: ExportDriver.firstModelLine + 2) == nil)
        #expect(driver.mainSource.contains("encoder.encode(ExportSchemaOutput(schema))"))
    }

    @Test func theDriverDependsOnThePackageByPath() {
        let manifest = driver.manifest
        #expect(manifest.contains(#"dependencies: [.package(path: "/work/My App")],"#))
        #expect(manifest.contains(#"dependencies: [.product(name: "AppModels", package: "My App")])"#))
        #expect(manifest.contains(#"platforms: [.macOS("15.0")],"#))
        #expect(manifest.hasPrefix("// swift-tools-version: 6.0\n"))
    }

    @Test func namesAreCheckedBeforeTheyReachTheDriver() {
        #expect(ExportDriver.moduleName(ofTarget: "My-Models") == "My_Models")
        #expect(ExportDriver.moduleName(ofTarget: "3D") == "_3D")
        #expect(ExportDriver.isTypeName("Library.Book"))
        #expect(!ExportDriver.isTypeName("Book.self]; exit(0); ["))
        #expect(!ExportDriver.isTypeName("Book."))
    }

    @Test func theManifestNamesTheTargetsAndTheLibraryThatHoldsThem() throws {
        let manifest = try PackageManifest.parse(Data(Self.dump.utf8), path: "/p")
        let driver = try manifest.driver(target: "Models", models: ["Item"], packagePath: "/p/shop")
        #expect(driver.product == "ShopKit")
        #expect(driver.packageIdentity == "shop")
        #expect(driver.platforms == [#".macOS("15.0")"#])
        let unknown = try #require(throws: ToolError.self) {
            try manifest.driver(target: "Model", models: ["Item"], packagePath: "/p/shop")
        }
        #expect(unknown.status == .notFound)
        #expect(unknown.message == "the package at '/p/shop' has no target 'Model'")
        #expect(unknown.remedy == "Its library targets are 'Models', 'Helpers'; pass one to --target")
        let hidden = try #require(throws: ToolError.self) {
            try manifest.driver(target: "Helpers", models: ["Item"], packagePath: "/p/shop")
        }
        #expect(hidden.message.contains("the target 'Helpers' of the package at '/p/shop' is in no library product"))
    }

    @Test func aCompilerErrorOnAModelLineNamesTheModel() {
        let export = PackageSchemaExport(package: "shop", target: "Models", models: driver.models)
        let line = ExportDriver.firstModelLine + 1
        let output = """
            [3/5] Compiling ExportSchema main.swift
            /tmp/x/Sources/ExportSchema/main.swift:\(line):5: error: module 'App_Models' has no member named 'Book'
            """
        let error = export.buildFailure(output, driver: driver)
        #expect(
            error.message
                == "cannot export 'Library.Book' of the target 'Models': module 'App_Models' has no member named 'Book'"
        )
        let own = export.buildFailure("/p/Sources/Models/A.swift:3:1: error: expected declaration", driver: driver)
        #expect(own.message.hasPrefix("the package at 'shop' did not build for the export:\n"))
        #expect(own.message.hasSuffix("A.swift:3:1: error: expected declaration"))
    }

    @Test func aMissingPackageOrABadModelNameIsReportedWithoutBuilding() throws {
        let folder = try TemporaryDirectory()
        let missing = try #require(throws: ToolError.self) {
            try PackageSchemaExport(package: folder.path("nowhere"), target: "App", models: ["A"]).makeDriver()
        }
        #expect(missing.status == .notFound)
        #expect(missing.message.hasPrefix("there is no Swift package at '\(folder.path("nowhere"))'"))
        try Data("// swift-tools-version: 6.0\n".utf8).write(to: folder.file("Package.swift"))
        let badName = try #require(throws: ToolError.self) {
            try PackageSchemaExport(package: folder.url.path, target: "App", models: ["A-B"]).makeDriver()
        }
        #expect(badName.message == "'A-B' in --models is not a Swift type name")
    }

    @Test func theCommandLineNeedsATargetAndModelsWithAPackage() throws {
        func failure(_ words: [String]) throws -> ToolError {
            let invocation = try Invocation(words, for: SchemaExportCommand.self)
            return try #require(throws: ToolError.self) {
                _ = try SchemaExportCommand.run(invocation, console: Console(json: false))
            }
        }
        #expect(try failure(["--package", "."]).message.contains("needs the target"))
        #expect(
            try failure(["--package", ".", "--target", "App"]).message.contains("needs the model classes of 'App'"))
        #expect(try failure(["x.json", "--package", "."]).message.contains("not both"))
        #expect(try failure(["x.json", "--models", "A"]).message.contains("'--models' of 'schema export'"))
        #expect(try failure([]).status == .usage)
    }

    /// A package whose library holds the golden models (made public) exports as the schema file
    /// they were generated from, initial values, enums' cases and structs' fields included; and
    /// hand-written models with enum and `Codable` struct attributes (`Fixtures/CatalogPackage.swift`)
    /// export as `Fixtures/catalog.json`, which `generate` turns into `Golden/Catalog.swift`: that
    /// file compiles (it is part of this target) and exports back to the same file
    /// (`ExportedValueTypesTests`). One test, as the two exports share the driver's folder. It
    /// builds ModelStore in a package of its own: about half a minute the first time, seconds
    /// later (the build is kept under the temporary directory).
    @Test func aPackagesModelsExportAsTheFilesTheyWereGeneratedFrom() throws {
        let package = try Self.writeFixturePackage()
        let golden = try PackageSchemaExport(
            package: package.path, target: "GoldenModels", models: ["Project", "Todo", "Person"]
        ).output().document(source: "'GoldenPackage'")
        #expect(golden.warnings.isEmpty)
        #expect(golden.document.jsonText == (try SchemaToolFixtures.text("Fixtures/schema.json")))

        let catalog = try PackageSchemaExport(package: package.path, target: "GoldenModels", models: ["Book"])
            .output().document(source: "'GoldenPackage'")
        #expect(catalog.warnings.isEmpty)
        #expect(catalog.document.jsonText == (try SchemaToolFixtures.text("Fixtures/catalog.json")))
        let generated = try ModelCodeWriter(document: catalog.document).file(source: "catalog.json")
        #expect(generated == (try SchemaToolFixtures.text("Golden/Catalog.swift")))

        let files = try FileManager.default.contentsOfDirectory(atPath: package.path).sorted()
        #expect(files == ["Package.swift", "Sources"], "nothing is written into the package")
    }

    /// `Golden/Models.swift`, made public, as the library of a package that depends on this one.
    private static func writeFixturePackage() throws -> URL {
        let root = SchemaToolFixtures.folder.deletingLastPathComponent().deletingLastPathComponent()
        // A folder per checkout, so that two checkouts' test runs do not rewrite each other's package.
        let folder = PackageSchemaExport.defaultWorkFolder(for: root.path).lastPathComponent + "-test"
        let package = FileManager.default.temporaryDirectory.appendingPathComponent("\(folder)/GoldenPackage")
        let sources = package.appendingPathComponent("Sources/GoldenModels")
        try FileManager.default.createDirectory(at: sources, withIntermediateDirectories: true)
        let manifest = """
            // swift-tools-version: 6.0
            import PackageDescription

            let package = Package(
                name: "GoldenPackage",
                products: [.library(name: "GoldenModels", targets: ["GoldenModels"])],
                dependencies: [.package(path: \(SwiftNames.stringLiteral(root.path)))],
                targets: [
                    .target(
                        name: "GoldenModels",
                        dependencies: [.product(name: "ModelStore", package: "\(root.lastPathComponent)")])
                ]
            )

            """
        let models = try SchemaToolFixtures.text("Golden/Models.swift")
            .replacingOccurrences(of: "final class ", with: "public final class ")
            .replacingOccurrences(of: "    let persistentBackingData", with: "    public let persistentBackingData")
            .replacingOccurrences(of: "    init() {}", with: "    public init() {}")
            .replacingOccurrences(of: "    static var constraints", with: "    public static var constraints")
            .replacingOccurrences(of: " var id: ", with: " public var id: ")  // Identifiable's
            .replacingOccurrences(of: "\nenum ", with: "\npublic enum ")
            .replacingOccurrences(of: "\nstruct ", with: "\npublic struct ")
        let catalog = try SchemaToolFixtures.text("Fixtures/CatalogPackage.swift")
        for (name, text) in [
            ("Package.swift", manifest), ("Sources/GoldenModels/Models.swift", models),
            ("Sources/GoldenModels/Catalog.swift", catalog),
        ] {
            let file = package.appendingPathComponent(name)
            if (try? String(contentsOf: file, encoding: .utf8)) != text { try Data(text.utf8).write(to: file) }
        }
        return package
    }

    /// A shortened `swift package dump-package` of a package with two targets, one in a library.
    private static let dump = """
        {"name": "Shop",
         "platforms": [{"platformName": "macos", "version": "15.0", "options": []},
                       {"platformName": "plan9", "version": "4"}],
         "products": [{"name": "ShopKit", "targets": ["Models"], "type": {"library": ["automatic"]}},
                      {"name": "shop", "targets": ["Helpers"], "type": {"executable": null}}],
         "targets": [{"name": "Models", "type": "regular"}, {"name": "Helpers", "type": "regular"},
                     {"name": "ModelsTests", "type": "test"}]}
        """
}

/// `Schema.descriptionWithInitialValues`, which the driver prints: initial values ride along in
/// the description's JSON, and what stores record (without them) is unchanged.
struct DescriptionInitialValueTests {
    @Test func initialValuesRoundTripThroughJSONAndStoredDescriptionsHaveNone() throws {
        let schema = Schema([Project.self, Todo.self, Person.self])
        let described = schema.descriptionWithInitialValues
        let decoded = try JSONDecoder().decode(Schema.Description.self, from: JSONEncoder().encode(described))
        #expect(decoded == described)
        let name = try #require(described.entities[0].properties.first { $0.name == "name" })
        #expect(name.initialValue == .value(.string("Untitled")))
        #expect(described.entities[0].properties.first { $0.name == "createdAt" }?.initialValue == .perModel)
        #expect(schema.storedDescription.entities.allSatisfy { $0.properties.allSatisfy { $0.initialValue == nil } })
        let stored = String(decoding: try JSONEncoder().encode(schema.storedDescription), as: UTF8.self)
        #expect(!stored.contains("initialValue"), "a store's records are written as before")
    }

    @Test func aDescriptionWrittenBeforeInitialValuesStillDecodes() throws {
        let old = #"""
            {"version": {"major": 1, "minor": 0, "patch": 0}, "entities": [{"name": "A", "properties": [
              {"name": "n", "type": {"type": "string"}, "options": []}],
             "uniquenessConstraints": [], "indices": []}]}
            """#
        let description = try JSONDecoder().decode(Schema.Description.self, from: Data(old.utf8))
        #expect(description.entities[0].properties[0] == .attribute("n", .string))
        let bad = #"{"name": "n", "type": {"type": "string"}, "options": [], "initialValue": "always"}"#
        #expect(throws: DecodingError.self) {
            try JSONDecoder().decode(Schema.PropertyDescription.self, from: Data(bad.utf8))
        }
    }
}
