import Foundation
import ModelStore

/// Reads the schema of a Swift package's models for `schema export --package`: checks the package
/// and target from the package's manifest, writes an ``ExportDriver`` into a folder of its own
/// under the temporary directory, builds it and runs it with `swift`, and reads what it prints.
///
/// Nothing is written into the user's package: the driver's folder (kept between runs, so a
/// second export only rebuilds what changed) holds the driver and its `.build`.
package struct PackageSchemaExport {
    /// An export of the models `models` of the target `target` of the package at `package`.
    package init(package: String, target: String, models: [String], workFolder: URL? = nil) {
        self.package = package
        self.target = target
        self.models = models
        self.workFolder = workFolder
    }

    /// The package's folder, as given.
    package let package: String
    /// The target that declares the models.
    package let target: String
    /// The model types' names.
    package let models: [String]
    /// Where the driver is written; by default a folder per package under the temporary directory.
    package var workFolder: URL? = nil

    /// The package's folder, absolute and without `..`.
    package var packageURL: URL {
        URL(fileURLWithPath: package, relativeTo: URL(fileURLWithPath: FileManager.default.currentDirectoryPath))
            .standardizedFileURL
    }

    /// The schema of the models, with their initial values and the enums and structs they store.
    package func output() throws(ToolError) -> ExportDriverOutput {
        let driver = try makeDriver()
        let folder = workFolder ?? Self.defaultWorkFolder(for: packageURL.path)
        try write(driver, into: folder)
        // SwiftPM keeps a path dependency's list of source files in the build manifest and does not
        // notice a file added to the package since: without the manifest it plans the build again
        // (a second or so) and the models of a new file are found. The compiled files are kept.
        try? FileManager.default.removeItem(at: folder.appendingPathComponent(".build/debug.yaml"))
        let build = try SwiftCommand.run(["build", "--package-path", folder.path, "--product", ExportDriver.executable])
        guard build.status == 0 else { throw buildFailure(build.output, driver: driver) }
        let run = try SwiftCommand.run(
            ["run", "--skip-build", "--package-path", folder.path, ExportDriver.executable], separateErrors: true)
        guard run.status == 0 else {
            throw ToolError(
                .failure, code: DataStoreError.Code.invalidSchema.name,
                "the models \(Self.quoted(models)) of '\(target)' do not form a valid schema: "
                    + run.errors.trimmingCharacters(in: .whitespacesAndNewlines),
                remedy: "Fix the models, or name every model their relationships need in --models")
        }
        do {
            return try JSONDecoder().decode(ExportDriverOutput.self, from: Data(run.output.utf8))
        } catch {
            throw ToolError(
                .failure, code: DataStoreError.Code.invalidSchema.name,
                "the export of '\(target)' printed no schema: \(error)",
                remedy: "Check that the package uses this version of ModelStore")
        }
    }

    /// The driver for the package's manifest; throws when the package or the target is not there.
    package func makeDriver() throws(ToolError) -> ExportDriver {
        let path = packageURL.path
        guard FileManager.default.fileExists(atPath: packageURL.appendingPathComponent("Package.swift").path) else {
            throw ToolError(
                .notFound, code: DataStoreError.Code.notFound.name,
                "there is no Swift package at '\(package)' (no 'Package.swift' in '\(path)')",
                remedy: "Pass the folder that holds the package's Package.swift to --package")
        }
        if let name = models.first(where: { !ExportDriver.isTypeName($0) }) {
            throw ToolError.usage(
                "'\(name)' in --models is not a Swift type name",
                remedy: "Name the model classes, separated by commas: '--models Project,Task'")
        }
        let manifest = try PackageManifest.read(path, scratch: Self.defaultWorkFolder(for: path))
        return try manifest.driver(target: target, models: models, packagePath: path)
    }

    private func write(_ driver: ExportDriver, into folder: URL) throws(ToolError) {
        let sources = folder.appendingPathComponent("Sources/\(ExportDriver.executable)")
        do {
            try FileManager.default.createDirectory(at: sources, withIntermediateDirectories: true)
            try Self.write(driver.manifest, to: folder.appendingPathComponent("Package.swift"))
            try Self.write(driver.mainSource, to: sources.appendingPathComponent("main.swift"))
            for (name, text) in ExportDriver.supportSources {
                try Self.write(text, to: sources.appendingPathComponent(name))
            }
        } catch {
            throw ToolError(
                .failure, code: DataStoreError.Code.io.name,
                "could not write the export package into '\(folder.path)': \(error.localizedDescription)",
                remedy: "Check that the temporary directory (TMPDIR) is writable")
        }
    }

    /// Writes `text` unless the file holds it already, so that SwiftPM's cache stays valid.
    private static func write(_ text: String, to url: URL) throws {
        if let old = try? String(contentsOf: url, encoding: .utf8), old == text { return }
        try Data(text.utf8).write(to: url, options: .atomic)
    }

    /// The error for a driver that did not build: a model the compiler rejects, or the package's
    /// own errors, with the compiler's lines.
    package func buildFailure(_ output: String, driver: ExportDriver) -> ToolError {
        // The compiler's own lines (`file:line:col: error: ...`), once each, without its source excerpts.
        var errors: [String] = []
        for line in output.split(separator: "\n").map(String.init)
        where (line.contains(": error: ") || line.hasPrefix("error: ")) && !line.hasPrefix(" ")
            && !errors.contains(line)
        {
            errors.append(line)
        }
        let mainFile = "/\(ExportDriver.executable)/main.swift:"
        for line in errors {
            guard let range = line.range(of: mainFile) else { continue }
            let number = line[range.upperBound...].prefix { $0.isNumber }
            guard let model = Int(number).flatMap(driver.model(atLine:)) else { continue }
            let message = line.components(separatedBy: "error: ").dropFirst().joined(separator: "error: ")
            return ToolError(
                .failure, code: "buildFailed", "cannot export '\(model)' of the target '\(target)': \(message)",
                remedy:
                    "Name public PersistentModel classes of '\(target)' in --models; the export imports '\(driver.module)' from another package, so they must be public"
            )
        }
        let shown = errors.isEmpty ? Array(output.split(separator: "\n").suffix(20).map(String.init)) : errors
        return ToolError(
            .failure, code: "buildFailed",
            "the package at '\(package)' did not build for the export:\n" + shown.prefix(20).joined(separator: "\n"),
            remedy: "Fix these errors; 'swift build --package-path \(package)' shows them too")
    }

    /// A folder of the temporary directory for the package at `path`, the same on every run.
    package static func defaultWorkFolder(for path: String) -> URL {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in path.utf8 {
            hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3
        }
        return FileManager.default.temporaryDirectory.appendingPathComponent(
            "modelstore-schema-export-" + String(hash, radix: 16))
    }

    package static func quoted(_ names: [String]) -> String {
        names.map { "'\($0)'" }.joined(separator: ", ")
    }
}

/// What `swift package dump-package` says of a package: its targets, library products and platforms.
package struct PackageManifest {
    /// The targets' names and types (`regular`, `executable`, `test`, ...).
    package var targets: [(name: String, type: String)]
    /// The library products' names and targets.
    package var libraries: [(name: String, targets: [String])]
    /// The platforms, as `Package.swift` writes them.
    package var platforms: [String]

    /// Reads the manifest of the package at `path`; SwiftPM's scratch files go under `scratch`.
    package static func read(_ path: String, scratch: URL) throws(ToolError) -> PackageManifest {
        let dump = try SwiftCommand.run(
            [
                "package", "--package-path", path, "--scratch-path", scratch.appendingPathComponent(".build").path,
                "dump-package",
            ], separateErrors: true)
        guard dump.status == 0 else {
            throw ToolError(
                .failure, code: "buildFailed",
                "could not read the manifest of the package at '\(path)': "
                    + dump.errors.trimmingCharacters(in: .whitespacesAndNewlines),
                remedy: "Fix its Package.swift; 'swift package dump-package' shows the same error")
        }
        return try parse(Data(dump.output.utf8), path: path)
    }

    /// The manifest in a `dump-package` JSON.
    package static func parse(_ data: Data, path: String) throws(ToolError) -> PackageManifest {
        guard let root = try? JSONSerialization.jsonObject(with: data) as? [String: Any] else {
            throw ToolError(
                .failure, code: "buildFailed", "'swift package dump-package' printed no manifest for '\(path)'",
                remedy: "Check that 'swift' on PATH is a Swift 6 toolchain")
        }
        let targets = (root["targets"] as? [[String: Any]] ?? []).compactMap { target in
            (target["name"] as? String).map { ($0, target["type"] as? String ?? "regular") }
        }
        let libraries = (root["products"] as? [[String: Any]] ?? []).compactMap { product -> (String, [String])? in
            guard let name = product["name"] as? String, let type = product["type"] as? [String: Any],
                type["library"] != nil
            else { return nil }
            return (name, product["targets"] as? [String] ?? [])
        }
        let platforms = (root["platforms"] as? [[String: Any]] ?? []).compactMap { platform -> String? in
            guard let name = platform["platformName"] as? String, let version = platform["version"] as? String
            else { return nil }
            return ExportDriver.platform(name, version: version)
        }
        return PackageManifest(targets: targets, libraries: libraries, platforms: platforms)
    }

    /// The driver that exports `models` of `target`; throws when the package has no such target or
    /// no library product holds it.
    package func driver(target: String, models: [String], packagePath: String) throws(ToolError) -> ExportDriver {
        guard targets.contains(where: { $0.name == target }) else {
            let names = targets.filter { $0.type == "regular" }.map(\.name)
            throw ToolError(
                .notFound, code: DataStoreError.Code.notFound.name,
                "the package at '\(packagePath)' has no target '\(target)'",
                remedy: names.isEmpty
                    ? "Pass the name of the target that declares the models to --target"
                    : "Its library targets are \(PackageSchemaExport.quoted(names)); pass one to --target")
        }
        guard let library = libraries.first(where: { $0.targets.contains(target) }) else {
            throw ToolError(
                .unsupported, code: DataStoreError.Code.unsupportedFeature.name,
                "the target '\(target)' of the package at '\(packagePath)' is in no library product, so another package cannot import it",
                remedy: "Add '.library(name: \"\(target)\", targets: [\"\(target)\"])' to the package's products")
        }
        return ExportDriver(
            packagePath: packagePath, packageIdentity: URL(fileURLWithPath: packagePath).lastPathComponent,
            product: library.name, module: ExportDriver.moduleName(ofTarget: target), models: models,
            platforms: platforms)
    }
}

/// Runs `swift` (the one on PATH) and collects what it prints.
package enum SwiftCommand {
    /// What a run printed and how it ended.
    package struct Result {
        /// The exit status.
        package var status: Int32
        /// Standard output (with standard error too, unless kept apart).
        package var output: String
        /// Standard error, when kept apart.
        package var errors: String
    }

    /// Runs `swift ARGUMENTS`; with `separateErrors` standard error is collected on its own (in a
    /// temporary file, so that neither stream can fill while the other is read).
    package static func run(_ arguments: [String], separateErrors: Bool = false) throws(ToolError) -> Result {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["swift"] + arguments
        let output = Pipe()
        let errorFile = FileManager.default.temporaryDirectory.appendingPathComponent(
            "modelstore-swift-\(UUID().uuidString).err")
        defer { try? FileManager.default.removeItem(at: errorFile) }
        process.standardOutput = output
        process.standardInput = FileHandle.nullDevice
        do {
            if separateErrors {
                _ = FileManager.default.createFile(atPath: errorFile.path, contents: nil)
                process.standardError = try FileHandle(forWritingTo: errorFile)
            } else {
                process.standardError = output
            }
            try process.run()
        } catch {
            throw ToolError(
                .failure, code: DataStoreError.Code.io.name,
                "could not run 'swift \(arguments.first ?? "")': \(error.localizedDescription)",
                remedy: "Install a Swift 6 toolchain and put 'swift' on PATH")
        }
        let printed = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let errors = separateErrors ? (try? Data(contentsOf: errorFile)) ?? Data() : Data()
        return Result(
            status: process.terminationStatus, output: String(decoding: printed, as: UTF8.self),
            errors: String(decoding: errors, as: UTF8.self))
    }
}
