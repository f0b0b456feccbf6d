import Foundation
import ModelStore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// The on-disk form of an ``EntityFilesStore``: a directory with one JSON file per entity and a
/// manifest that says which file is current.
///
/// ```
/// trips-data/
///   manifest.json        {"format": 1, "generation": 3, "files": {"Trip": "Trip.3.json", …}, …}
///   Trip.3.json          [ {"id": …, "entity": "Trip", "values": {…}}, … ]
///   Item.2.json
/// ```
///
/// A save writes the files of the entities it changed under the next generation number, then
/// replaces the manifest. Replacing the manifest (a rename) is the commit: a save that stops
/// before it leaves the previous manifest, which still names the previous files, so the store
/// opens exactly as it was. Every file is flushed to disk before it is renamed into place.
struct EntityFilesDirectory {
    /// The manifest: the commit point of the store.
    struct Manifest: Codable, Equatable {
        /// The version of this layout.
        var format: Int
        /// The identifier every stored identifier carries.
        var storeIdentifier: String
        /// Incremented by every save.
        var generation: Int
        /// The next integer primary key to mint.
        var nextPrimaryKey: Int64
        /// The current file of each entity that has one, by entity name.
        var files: [String: String]
    }

    static let manifestName = "manifest.json"
    static let format = 1

    let url: URL
    let schema: Schema

    private var manifestURL: URL { url.appendingPathComponent(Self.manifestName) }

    /// The manifest, or `nil` when the directory has none (a new store). Reads only.
    func readManifest() throws -> Manifest? {
        guard FileManager.default.fileExists(atPath: manifestURL.path) else { return nil }
        let manifest: Manifest
        do {
            manifest = try JSONDecoder().decode(Manifest.self, from: Data(contentsOf: manifestURL))
        } catch {
            throw DataStoreError(
                .corrupted, "the manifest '\(manifestURL.path)' cannot be read",
                remedy: "Restore the directory from a backup", underlyingError: error)
        }
        guard manifest.format == Self.format else {
            throw DataStoreError(
                .corrupted,
                "the manifest '\(manifestURL.path)' has format \(manifest.format); "
                    + "this store reads format \(Self.format)",
                remedy: "Open it with the version of the adapter that wrote it")
        }
        return manifest
    }

    /// NaN and the infinities, which JSON numbers cannot hold, as strings in a `double` value's place: a
    /// stored `Double` or `Float` may be any value Swift has.
    static let nonConformingFloats = (
        encoding: JSONEncoder.NonConformingFloatEncodingStrategy.convertToString(
            positiveInfinity: "+Infinity", negativeInfinity: "-Infinity", nan: "NaN"),
        decoding: JSONDecoder.NonConformingFloatDecodingStrategy.convertFromString(
            positiveInfinity: "+Infinity", negativeInfinity: "-Infinity", nan: "NaN")
    )

    /// The snapshots in an entity's file.
    func readSnapshots(of entityName: String, file: String) throws -> [DefaultSnapshot] {
        guard schema.entity(named: entityName) != nil else {
            throw DataStoreError(
                .corrupted,
                "the store in '\(url.path)' holds the entity '\(entityName)', which the schema does not have",
                remedy: "Open it with a schema that includes '\(entityName)'", entityName: entityName)
        }
        let fileURL = url.appendingPathComponent(file)
        let decoder = JSONDecoder()
        decoder.userInfo[.modelStoreSchema] = schema
        decoder.nonConformingFloatDecodingStrategy = Self.nonConformingFloats.decoding
        do {
            let snapshots = try decoder.decode([DefaultSnapshot].self, from: Data(contentsOf: fileURL))
            if let stray = snapshots.first(where: { $0.entity.name != entityName }) {
                throw DataStoreError(
                    .corrupted, "the file '\(fileURL.path)' of '\(entityName)' holds a '\(stray.entity.name)'",
                    entityName: entityName)
            }
            return snapshots
        } catch let error as DataStoreError {
            throw error
        } catch {
            throw DataStoreError(
                .corrupted, "the file '\(fileURL.path)' of '\(entityName)' cannot be read",
                remedy: "Restore the directory from a backup", entityName: entityName, underlyingError: error)
        }
    }

    /// Writes the changed entities' files under `manifest.generation`, then the manifest, then
    /// removes the files the new manifest no longer names.
    func commit(_ manifest: Manifest, changed: [String: [DefaultSnapshot]], previous: Manifest?) throws {
        do {
            try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
            encoder.nonConformingFloatEncodingStrategy = Self.nonConformingFloats.encoding
            for (entityName, snapshots) in changed {
                guard let file = manifest.files[entityName] else { continue }
                try Self.writeDurably(encoder.encode(snapshots), to: url.appendingPathComponent(file))
            }
            try Self.writeDurably(encoder.encode(manifest), to: manifestURL)
            Self.synchronizeDirectory(url)
        } catch let error as DataStoreError {
            throw error
        } catch {
            throw DataStoreError(
                .io, "cannot write the store in '\(url.path)'",
                remedy: "Check that the directory is writable and the disk has space", underlyingError: error)
        }
        let current = Set(manifest.files.values)
        for file in (previous?.files ?? [:]).values where !current.contains(file) {
            try? FileManager.default.removeItem(at: url.appendingPathComponent(file))
        }
    }

    /// Removes the store's files (the manifest first, so a crash leaves an empty store).
    func removeAll(_ manifest: Manifest?) throws {
        guard let manifest else { return }
        do {
            try FileManager.default.removeItem(at: manifestURL)
        } catch {
            throw DataStoreError(.io, "cannot remove '\(manifestURL.path)'", underlyingError: error)
        }
        for file in manifest.files.values { try? FileManager.default.removeItem(at: url.appendingPathComponent(file)) }
    }

    /// Writes to a temporary file, flushes it to disk, and renames it over the target.
    private static func writeDurably(_ data: Data, to target: URL) throws {
        let temporary = target.appendingPathExtension("tmp")
        guard FileManager.default.createFile(atPath: temporary.path, contents: nil) else {
            throw DataStoreError(.io, "cannot create '\(temporary.path)'", remedy: "Check the directory's permissions")
        }
        let handle = try FileHandle(forWritingTo: temporary)
        defer { try? handle.close() }
        try handle.write(contentsOf: data)
        try handle.synchronize()
        guard rename(temporary.path, target.path) == 0 else {
            throw DataStoreError(
                .io, "cannot rename '\(temporary.path)' to '\(target.lastPathComponent)' (errno \(errno))")
        }
    }

    /// Flushes the directory itself, so the renames survive a power loss.
    private static func synchronizeDirectory(_ directory: URL) {
        let descriptor = open(directory.path, O_RDONLY)
        guard descriptor >= 0 else { return }
        defer { close(descriptor) }
        _ = fsync(descriptor)
    }
}
