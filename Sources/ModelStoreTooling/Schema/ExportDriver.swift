import Foundation

/// The small package `schema export --package` writes and runs to read a package's models: it
/// depends on the package by path, imports the target, builds a `Schema` of the named model types
/// and prints `Schema.descriptionWithInitialValues` as JSON, with the cases of the enums and the fields
/// of the `Codable` structs that the attributes store.
///
/// The tool cannot load Swift types itself; the driver is compiled against the user's code instead.
/// Only `main.swift` depends on the models; the driver's other files are ``supportSources``, the
/// sources of the ModelStoreSchemaExportSupport target, generated into this module when it builds.
package struct ExportDriver: Equatable {
    /// The folder of the user's package (absolute).
    package let packagePath: String
    /// The package's identity, as `.product(name:package:)` names it: its folder's name.
    package let packageIdentity: String
    /// The library product that holds the target.
    package let product: String
    /// The target's module name (the target's name with characters Swift cannot use replaced).
    package let module: String
    /// The model types, as named on the command line.
    package let models: [String]
    /// The package's platforms, as `Package.swift` writes them (`.macOS("15.0")`).
    package var platforms: [String] = []

    /// The driver's executable target.
    package static let executable = "ExportSchema"

    /// The driver's `Package.swift`.
    package var manifest: String {
        var lines = [
            "// swift-tools-version: 6.0",
            "// Written by `modelstore schema export --package`; it reads the models of '\(module)' and prints their schema.",
            "import PackageDescription",
            "",
            "let package = Package(",
            "    name: \"ModelStoreSchemaExport\",",
        ]
        if !platforms.isEmpty { lines.append("    platforms: [\(platforms.joined(separator: ", "))],") }
        lines += [
            "    dependencies: [.package(path: \(SwiftNames.stringLiteral(packagePath)))],",
            "    targets: [",
            "        .executableTarget(",
            "            name: \"\(Self.executable)\",",
            "            dependencies: [.product(name: \(SwiftNames.stringLiteral(product)), package: \(SwiftNames.stringLiteral(packageIdentity)))])",
            "    ]",
            ")",
        ]
        return lines.joined(separator: "\n") + "\n"
    }

    /// The first line of `main.swift` that names a model; model `i` is on line `firstModelLine + i`,
    /// so a compiler error there names the model.
    package static let firstModelLine = 7

    /// The driver's `main.swift`. The models are qualified by their module, and the framework's
    /// types by theirs, so that a model named like a framework type (`Schema`) is no problem.
    package var mainSource: String {
        let header = [
            "// Written by `modelstore schema export --package`: the schema of these models, as JSON.",
            "import Foundation",
            "import ModelStore",
            "import \(module)",
            "",
            "let models: [any ModelStore.PersistentModel.Type] = [",
        ]
        let body = [
            "]",
            "let schema = ModelStore.Schema(models)",
            "do {",
            "    try schema.validate()",
            "    let encoder = JSONEncoder()",
            "    encoder.outputFormatting = [.sortedKeys]",
            "    FileHandle.standardOutput.write(try encoder.encode(ExportSchemaOutput(schema)))",
            "} catch {",
            "    FileHandle.standardError.write(Data(\"\\(error)\\n\".utf8))",
            "    exit(1)",
            "}",
        ]
        return (header + models.map { "    \(module).\($0).self," } + body).joined(separator: "\n") + "\n"
    }

    /// The model named on a line of `main.swift`, if that line names one.
    package func model(atLine line: Int) -> String? {
        let index = line - Self.firstModelLine
        return models.indices.contains(index) ? models[index] : nil
    }

    /// The module name SwiftPM gives a target: letters, digits and `_`, not starting with a digit.
    package static func moduleName(ofTarget target: String) -> String {
        let name = String(target.map { $0.isLetter || $0.isNumber || $0 == "_" ? $0 : "_" })
        return name.first?.isNumber == true ? "_" + name : name
    }

    /// Whether `name` can be written in the driver as a type name: an identifier, or several
    /// joined by dots (`Library.Book`, for a nested type).
    package static func isTypeName(_ name: String) -> Bool {
        let parts = name.split(separator: ".", omittingEmptySubsequences: false)
        return parts.allSatisfy { part in
            part.first.map { $0.isLetter || $0 == "_" } == true
                && part.allSatisfy { $0.isLetter || $0.isNumber || $0 == "_" }
        }
    }

    /// A platform of a manifest dump (`macos`, `15.0`) as `Package.swift` writes it, or `nil` for
    /// one this tool does not know (the driver then leaves it out).
    package static func platform(_ name: String, version: String) -> String? {
        let spelled = [
            "macos": "macOS", "ios": "iOS", "tvos": "tvOS", "watchos": "watchOS", "visionos": "visionOS",
            "maccatalyst": "macCatalyst", "driverkit": "driverKit",
        ]
        return spelled[name].map { ".\($0)(\(SwiftNames.stringLiteral(version)))" }
    }
}
