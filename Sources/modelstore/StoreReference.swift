import Foundation
import ModelStore
import ModelStoreAdapters
import ModelStoreAppendLog
import ModelStoreSQLite

/// A store named on the command line: its URL checked against the registry, and what the tool
/// can learn about it without the app's model types.
///
/// A scheme whose stores keep a schema the tool can read (``StoreScheme/readStoredSchema``) is
/// taken to name a file or a directory by its location; the built-in `json:` and `log:` do.
struct StoreReference {
    /// The URL as typed.
    let string: String
    /// The parsed URL.
    let url: StoreURL
    /// The URL's registered scheme.
    let scheme: StoreScheme

    /// Parses and checks a store URL; throws `invalidConfiguration` naming the string and listing
    /// the registered schemes.
    init(_ string: String, registry: StoreRegistry = .shared) throws {
        registry.registerBuiltInSchemes()
        url = try registry.url(string)
        guard let scheme = registry.scheme(named: url.scheme) else {
            throw ToolError.unsupported(
                "the scheme '\(url.scheme):' of '\(string)' is not registered", remedy: "Use 'json:PATH' or 'log:DIR'")
        }
        self.string = string
        self.scheme = scheme
    }

    /// The file or directory the store lives at; `nil` for schemes that keep no stored data.
    var path: URL? {
        scheme.readStoredSchema != nil && !url.location.isEmpty ? url.fileURL : nil
    }

    /// Whether something exists at ``path``.
    var exists: Bool {
        path.map { FileManager.default.fileExists(atPath: $0.path) } ?? false
    }

    /// The configuration the URL names.
    func configuration() throws -> any DataStoreConfiguration {
        try scheme.makeConfiguration(url)
    }

    /// Whether the URL names an append log (whatever the scheme is called).
    var isAppendLog: Bool {
        (try? configuration()) is AppendLogStoreConfiguration
    }

    /// Whether the URL names an SQLite store (whatever the scheme is called).
    var isSQLite: Bool {
        (try? configuration()) is SQLiteStoreConfiguration
    }

    /// The store's path, which must exist; `command` names what the tool was asked to do.
    ///
    /// Throws ``ExitStatus/unsupported`` for a scheme whose stores keep nothing the tool can read
    /// (such as `memory:`) and ``ExitStatus/notFound`` when nothing is at the path.
    func existingPath(for command: String) throws -> URL {
        guard let path else {
            if scheme.name == "memory" {
                throw ToolError.unsupported(
                    "'\(string)' names an in-memory store, which keeps nothing between processes: there is nothing to "
                        + command,
                    remedy: "Name a store on disk, such as 'json:PATH' or 'log:DIR'")
            }
            throw ToolError.unsupported(
                "the scheme '\(scheme.name):' does not tell tools how to read the schema its stores keep, so "
                    + "'\(string)' cannot be opened without the app's model types",
                remedy: "Its adapter can set one with StoreScheme.readingStoredSchema(_:)")
        }
        guard FileManager.default.fileExists(atPath: path.path) else {
            throw ToolError(
                .notFound, code: DataStoreError.Code.notFound.name,
                "there is no store at '\(path.path)' (named by '\(string)')",
                remedy: "Check the path; a relative path starts from the current directory, "
                    + "'\(FileManager.default.currentDirectoryPath)'")
        }
        return path
    }

    /// The schema the store was last written with, read from its own files.
    func storedSchema(for command: String) throws -> Schema.Description {
        _ = try existingPath(for: command)
        guard let read = scheme.readStoredSchema else {
            throw ToolError.unsupported("'\(string)' keeps no schema", remedy: "Name a store on disk")
        }
        return try read(url)
    }

    /// Opens the store with a schema built from a stored description, so that it is read and
    /// written as snapshots without the app's model types.
    func open(schema: Schema) throws -> OpenedStore {
        var configuration = try configuration()
        if var log = configuration as? AppendLogStoreConfiguration {
            // The tool decides when to compact; a background compaction would only race with it.
            log.compaction = .manual
            configuration = log
        }
        return try OpenedStore(configuration: configuration, schema: schema, name: string)
    }

    /// The files the store occupies, with their sizes: everything under its directory, or its
    /// file and the files beside it that share its name (`trips.json.backup`, `trips.json.lock`…).
    func filesOnDisk() -> [StoredFile] {
        guard let path, exists else { return [] }
        var isDirectory: ObjCBool = false
        _ = FileManager.default.fileExists(atPath: path.path, isDirectory: &isDirectory)
        if isDirectory.boolValue { return StoredFile.all(under: path, prefix: "") }
        let folder = path.deletingLastPathComponent()
        let name = path.lastPathComponent
        var files = [StoredFile(path: name, byteCount: StoredFile.size(of: path))]
        let siblings = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
        for sibling in siblings.sorted() where sibling.hasPrefix(name + ".") {
            let url = folder.appendingPathComponent(sibling)
            _ = FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory)
            files += isDirectory.boolValue
                ? StoredFile.all(under: url, prefix: sibling + "/")
                : [StoredFile(path: sibling, byteCount: StoredFile.size(of: url))]
        }
        return files
    }
}

/// A file a store occupies, relative to its directory (or to the folder of its file).
struct StoredFile: Encodable, Hashable {
    /// The relative path.
    let path: String
    /// The size in bytes.
    let byteCount: Int

    /// The size of a file, 0 if it cannot be read.
    static func size(of url: URL) -> Int {
        ((try? FileManager.default.attributesOfItem(atPath: url.path))?[.size] as? NSNumber)?.intValue ?? 0
    }

    /// Every regular file under a directory, by relative path, sorted.
    static func all(under directory: URL, prefix: String) -> [StoredFile] {
        guard let enumerator = FileManager.default.enumerator(atPath: directory.path) else { return [] }
        var files: [StoredFile] = []
        while let relative = enumerator.nextObject() as? String {
            let url = directory.appendingPathComponent(relative)
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory), !isDirectory.boolValue
            else { continue }
            files.append(StoredFile(path: prefix + relative, byteCount: size(of: url)))
        }
        return files.sorted { $0.path < $1.path }
    }
}
