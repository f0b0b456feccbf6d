import Foundation
import ModelStore

/// The settings of an ``EntityFilesStore``: the directory that holds its files.
public struct EntityFilesConfiguration: DataStoreConfiguration {
    /// The store type.
    public typealias Store = EntityFilesStore

    /// The configuration's name, unique within a container.
    public var name: String
    /// The schema; the container injects it.
    public var schema: Schema?
    /// The directory of the store's files. It is created on the first save, not on open.
    public var directory: URL

    /// A configuration for a directory.
    public init(directory: URL, name: String = "entity-files", schema: Schema? = nil) {
        self.directory = URL(fileURLWithPath: directory.standardizedFileURL.path, isDirectory: true)
        self.name = name
        self.schema = schema
    }

    /// Checks that the directory is not an existing regular file.
    public func validate() throws {
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: directory.path, isDirectory: &isDirectory), !isDirectory.boolValue {
            throw DataStoreError(
                .invalidConfiguration, "'\(directory.path)' is a file, but an entity-files store needs a directory",
                remedy: "Pass a directory path, or a path that does not exist yet")
        }
    }

    /// Configurations are equal when their names and directories are.
    public static func == (lhs: Self, rhs: Self) -> Bool { lhs.name == rhs.name && lhs.directory == rhs.directory }

    /// Hashes the name and the directory.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(name)
        hasher.combine(directory)
    }
}

extension DataStoreConfiguration where Self == EntityFilesConfiguration {
    /// A store that keeps one JSON file per entity in a directory.
    public static func entityFiles(at directory: URL, name: String = "entity-files") -> EntityFilesConfiguration {
        EntityFilesConfiguration(directory: directory, name: name)
    }
}

extension StoreScheme {
    /// `files:DIR`: an ``EntityFilesStore`` in the directory `DIR`.
    ///
    /// Register it once, and every store URL of the app can name it:
    ///
    /// ```swift
    /// StoreRegistry.shared.register(.entityFiles)
    /// let container = try ModelContainer(for: Trip.self, url: "files:trips-data")
    /// ```
    public static let entityFiles = StoreScheme(
        "files", summary: "one JSON file per entity in a directory", location: .required("DIR"),
        example: "files:trips-data"
    ) { url in
        EntityFilesConfiguration(directory: url.fileURL)
    }
}
