import Foundation
import ModelStore
import ModelStoreTooling

/// `modelstore convert SRC DST`: copies a store into another of any kind, keeping identifiers
/// and relationships.
enum ConvertCommand: Command {
    static let name = "convert"
    static let arguments = ["SRC", "DST"]
    static let summary = "copy any store into any other, keeping identifiers and relationships"
    static let details = """
        Reads every model of SRC with the schema SRC records and writes them to DST in one save,
        so DST gets all of them or none. DST must not exist, or be an empty store or an empty
        directory. Each model keeps its primary key; the store identifier in its identifier
        becomes DST's own (identifiers name the store that holds them), and every relationship is
        rewritten to match. DST records SRC's schema, version included. If the copy fails, the
        files it created are removed and SRC is never changed.

        Examples:
          modelstore convert json:trips.json log:trips-log
          modelstore convert log:trips-log json:copy.json --json
          modelstore convert json:trips.json memory:   (rewrites all, keeps nothing)
        """

    static func run(_ invocation: Invocation, console: Console) throws -> any CommandReport {
        let source = try StoreReference(invocation.arguments[0])
        let destination = try StoreReference(invocation.arguments[1])
        // A store a server keeps has no path; the rest must exist at theirs.
        let isServerStore = source.scheme.maintenance != nil && !source.storesFiles
        let sourcePath = isServerStore ? nil : try source.existingPath(for: "convert")
        let samePath = destination.path.map { $0.standardizedFileURL == sourcePath?.standardizedFileURL } ?? false
        if samePath || (isServerStore && source.url.string == destination.url.string) {
            throw ToolError.usage(
                "'\(source.string)' and '\(destination.string)' are the same store",
                remedy: "Give the copy another path")
        }
        let description = try source.storedSchema(for: "convert")
        let schema = try Schema(description)
        try requireEmpty(destination)
        let progress = console.progress()
        defer { progress.finish() }

        progress.phase("opening \(source.string)")
        let reader = try source.open(schema: schema)
        defer { reader.close() }
        progress.phase("reading \(source.string)", total: schema.entities.count)
        var snapshots: [DefaultSnapshot] = []
        var entities: [EntityCount] = []
        for entity in schema.entities {
            let read = try reader.snapshots(of: entity.name)
            snapshots += read
            entities.append(EntityCount(name: entity.name, modelCount: read.count))
            progress.advance()
        }

        let created = CreatedFiles(destination)
        do {
            progress.phase("opening \(destination.string)")
            let writer = try destination.open(schema: schema)
            defer { writer.close() }
            let copier = IdentifierRewriter(snapshots: snapshots, storeIdentifier: writer.identifier)
            progress.phase("rewriting identifiers", total: snapshots.count)
            let copies = try snapshots.map { snapshot in
                defer { progress.advance() }
                return try copier.copy(snapshot, source: source.string)
            }
            progress.phase("writing \(destination.string)")
            let remapped = try writer.insert(copies)
            return ConvertReport(
                source: source.string, destination: destination.string, sourceStoreIdentifier: reader.identifier,
                destinationStoreIdentifier: writer.identifier, schemaVersion: description.version.description,
                entities: entities, referenceCount: copier.referenceCount, keptPrimaryKeys: remapped.isEmpty)
        } catch {
            created.removeCreated()
            throw error
        }
    }

    /// Refuses a destination that holds models, or that is something other than a store. A store a
    /// server keeps is empty when the server holds none at the URL yet.
    private static func requireEmpty(_ destination: StoreReference) throws {
        let place: String
        if destination.storesFiles {
            guard let path = destination.path, destination.exists else { return }
            if let entries = try? FileManager.default.contentsOfDirectory(atPath: path.path), entries.isEmpty { return }
            place = path.path
        } else {
            guard destination.scheme.maintenance != nil else { return }
            place = destination.string
        }
        let held: Int
        do {
            let description = try destination.storedSchema(for: "convert")
            let store = try destination.open(schema: try Schema(description))
            defer { store.close() }
            held = try description.entities.reduce(0) { $0 + (try store.count(of: $1.name)) }
        } catch let error as DataStoreError where error.code == .notFound && !destination.storesFiles {
            return
        } catch let error as DataStoreError where error.code != .locked {
            throw ToolError(
                .destinationNotEmpty, code: "destinationNotEmpty",
                "the destination '\(place)' exists and is not a store modelstore can read (\(error.message))",
                remedy: "Give a path that does not exist yet; convert never overwrites")
        }
        guard held == 0 else {
            throw ToolError(
                .destinationNotEmpty, code: "destinationNotEmpty",
                "the destination '\(destination.string)' already holds \(ReportFormat.count(held, "model"))",
                remedy: "Give a path that does not exist yet, or an empty store; convert never merges or overwrites")
        }
    }
}

/// Rewrites the identifiers of copied models: each keeps its entity and primary key and takes the
/// destination's store identifier, in its own identifier and in every reference to it.
struct IdentifierRewriter {
    private let map: [PersistentIdentifier: PersistentIdentifier]
    /// How many references the copies hold.
    private(set) var referenceCount = 0

    /// A rewriter for a source's snapshots, into the store with `storeIdentifier`.
    init(snapshots: [DefaultSnapshot], storeIdentifier: String) {
        var map: [PersistentIdentifier: PersistentIdentifier] = [:]
        map.reserveCapacity(snapshots.count)
        for snapshot in snapshots {
            let id = snapshot.persistentIdentifier
            map[id] = id.rekeyed(storeIdentifier: storeIdentifier, primaryKey: id.primaryKey)
        }
        self.map = map
        referenceCount = snapshots.reduce(0) { total, snapshot in
            snapshot.entity.relationships.reduce(total) { $0 + snapshot.values[$1.slot].referencedIdentifiers.count }
        }
    }

    /// The snapshot under its new identifier, with its references rewritten; throws `corrupted`
    /// for a reference to a model the source does not hold.
    func copy(_ snapshot: DefaultSnapshot, source: String) throws -> DefaultSnapshot {
        for relationship in snapshot.entity.relationships {
            for target in snapshot.values[relationship.slot].referencedIdentifiers where map[target] == nil {
                throw DataStoreError(
                    .corrupted,
                    "\(snapshot.persistentIdentifier) in '\(source)' refers through "
                        + "'\(snapshot.entity.name).\(relationship.name)' to \(target), "
                        + "which '\(source)' does not hold",
                    remedy: "Run 'modelstore verify \(source)' and fix the store before converting it")
            }
        }
        return snapshot.copy(persistentIdentifier: map[snapshot.persistentIdentifier]!, remappedIdentifiers: map)
    }
}

/// The files a destination occupies before a copy, so that a failed copy removes only what it created.
struct CreatedFiles {
    private let path: URL?
    private let existed: Bool
    private let before: Set<String>

    /// Notes what is at the destination now.
    init(_ destination: StoreReference) {
        path = destination.path
        existed = destination.exists
        before = Set(destination.filesOnDisk().map(\.path))
    }

    /// Removes what the copy created: the store itself if it did not exist, otherwise the files
    /// that appeared in its directory or beside its file.
    func removeCreated() {
        guard let path else { return }
        let manager = FileManager.default
        var isDirectory: ObjCBool = false
        let exists = manager.fileExists(atPath: path.path, isDirectory: &isDirectory)
        if !existed && exists { try? manager.removeItem(at: path) }
        let folder = isDirectory.boolValue ? path : path.deletingLastPathComponent()
        let name = path.lastPathComponent
        let candidates =
            isDirectory.boolValue
            ? ((try? manager.contentsOfDirectory(atPath: path.path)) ?? [])
            : ((try? manager.contentsOfDirectory(atPath: folder.path)) ?? []).filter { $0.hasPrefix(name + ".") }
        for entry in candidates where !before.contains(where: { $0 == entry || $0.hasPrefix(entry + "/") }) {
            try? manager.removeItem(at: folder.appendingPathComponent(entry))
        }
    }
}

/// What `convert` reports.
struct ConvertReport: CommandReport {
    let source: String
    let destination: String
    let sourceStoreIdentifier: String
    let destinationStoreIdentifier: String
    let schemaVersion: String
    let entities: [EntityCount]
    let modelCount: Int
    let referenceCount: Int
    /// Whether every model kept its primary key (the destination minted none of its own).
    let keptPrimaryKeys: Bool

    init(
        source: String, destination: String, sourceStoreIdentifier: String, destinationStoreIdentifier: String,
        schemaVersion: String, entities: [EntityCount], referenceCount: Int, keptPrimaryKeys: Bool
    ) {
        self.source = source
        self.destination = destination
        self.sourceStoreIdentifier = sourceStoreIdentifier
        self.destinationStoreIdentifier = destinationStoreIdentifier
        self.schemaVersion = schemaVersion
        self.entities = entities
        modelCount = entities.reduce(0) { $0 + $1.modelCount }
        self.referenceCount = referenceCount
        self.keptPrimaryKeys = keptPrimaryKeys
    }

    var text: String {
        let keys =
            keptPrimaryKeys
            ? "every primary key kept" : "the destination assigned new primary keys, and references follow them"
        var lines = [
            "Copied \(ReportFormat.count(modelCount, "model")) from \(source) to \(destination) "
                + "(store '\(destinationStoreIdentifier)'): \(keys), "
                + "\(ReportFormat.count(referenceCount, "reference")) rewritten.",
            "",
            "Entities:",
        ]
        lines += EntityCount.lines(entities)
        return lines.joined(separator: "\n")
    }
}
