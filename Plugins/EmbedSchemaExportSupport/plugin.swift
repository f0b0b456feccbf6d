import Foundation
import PackagePlugin

/// Gives ModelStoreTooling the sources of the ModelStoreSchemaExportSupport target as
/// `ExportDriver.supportSources`, generated at build time, so that `schema export --package` writes
/// into its driver the very files this package compiles and tests.
///
/// The files are found by their folder, not through the package graph: when another package depends
/// on ModelStore, its graph holds only the targets that package's products reach, and the support
/// target is none of them.
@main
struct EmbedSchemaExportSupport: BuildToolPlugin {
    /// The folder of the target whose sources the driver receives, in the package.
    static let supportFolder = "Sources/ModelStoreSchemaExportSupport"

    func createBuildCommands(context: PluginContext, target: any Target) throws -> [Command] {
        let folder = context.package.directoryURL.appending(path: Self.supportFolder)
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
        let sources = names.filter { $0.hasSuffix(".swift") }.sorted().map { folder.appending(path: $0) }
        guard !sources.isEmpty else {
            throw PluginError("'\(folder.path)' holds no Swift file of the export driver; restore that folder")
        }
        let output = context.pluginWorkDirectoryURL.appending(path: "ExportDriver+SupportSources.swift")
        return [
            .buildCommand(
                displayName: "Embedding the sources of \(Self.supportFolder) in \(target.name)",
                executable: try context.tool(named: "ModelStoreSourceEmbedder").url,
                arguments: [output.path] + sources.map(\.path),
                inputFiles: sources,
                outputFiles: [output])
        ]
    }
}

/// Why the plugin could not plan the build.
struct PluginError: Error, CustomStringConvertible {
    /// What failed.
    let description: String

    init(_ description: String) { self.description = description }
}
