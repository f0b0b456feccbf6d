import Foundation
import ModelStore
import ModelStoreAdapterKit

/// External storage: the durable store keeps every `.externalStorage` `Data` value outside its JSON
/// file, one file per model and attribute in a folder beside it (`mutant.json.external/`), and keeps an
/// empty value in the file's snapshot in its place.
extension MutantStore {
    /// The folder of external values, beside the store's file.
    static func externalFolder(of configuration: MutantStoreConfiguration) -> URL? {
        configuration.file.map { $0.appendingPathExtension("external") }
    }

    /// The slots of the entity's `.externalStorage` attributes.
    private static func externalSlots(of entity: Schema.Entity) -> [(slot: Int, name: String)] {
        entity.attributes.filter { $0.options.contains(.externalStorage) }.compactMap { attribute in
            entity.slot(of: attribute.name).map { ($0, attribute.name) }
        }
    }

    private static func externalName(_ snapshot: DefaultSnapshot, _ attribute: String) -> String {
        "\(snapshot.entity.name)-\(snapshot.persistentIdentifier.primaryKey)-\(attribute)"
    }

    /// Writes the external values of `snapshots` into the folder, removes the files of values no longer
    /// stored, and returns the snapshots as the JSON file keeps them (external values emptied).
    static func movingExternalValuesOut(
        _ snapshots: [DefaultSnapshot], configuration: MutantStoreConfiguration
    ) throws -> [DefaultSnapshot] {
        guard let folder = externalFolder(of: configuration) else { return snapshots }
        func has(_ mutation: Mutation) -> Bool { configuration.mutation == mutation }
        var kept: [DefaultSnapshot] = []
        var written: Set<String> = []
        do {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            for var snapshot in snapshots {
                for (slot, attribute) in externalSlots(of: snapshot.entity) {
                    guard case .data(let bytes) = snapshot.values[slot] else { continue }
                    let name = externalName(snapshot, attribute)
                    let file = folder.appendingPathComponent(name)
                    written.insert(name)
                    snapshot.values[slot] = .data(Data())
                    if has(.externalValuesNotPersisted) { continue }
                    if has(.externalValuesNeverReplaced), FileManager.default.fileExists(atPath: file.path) {
                        continue
                    }
                    let stored = has(.externalValuesTruncated) ? bytes.prefix(2 << 20) : bytes
                    try stored.write(to: file, options: .atomic)
                }
                kept.append(snapshot)
            }
            for name in try FileManager.default.contentsOfDirectory(atPath: folder.path)
            where !written.contains(name) {
                try FileManager.default.removeItem(at: folder.appendingPathComponent(name))
                if has(.deleteRemovesEveryExternalValue), let entity = name.split(separator: "-").first {
                    for other in written where other.hasPrefix(entity + "-") {
                        try? FileManager.default.removeItem(at: folder.appendingPathComponent(other))
                    }
                }
            }
        } catch {
            throw DataStoreError(
                .io,
                "the mutant store could not write its external values in '\(folder.lastPathComponent)'",
                remedy: "Check that the folder is writable and the disk has room",
                underlyingError: ErrorText(error))
        }
        return kept
    }

    /// The snapshots the JSON file keeps, with their external values read back from the folder.
    static func readingExternalValuesIn(
        _ snapshots: [DefaultSnapshot], from configuration: MutantStoreConfiguration
    ) throws -> [DefaultSnapshot] {
        guard let folder = externalFolder(of: configuration) else { return snapshots }
        return try snapshots.map { snapshot in
            var snapshot = snapshot
            for (slot, attribute) in externalSlots(of: snapshot.entity) {
                guard case .data = snapshot.values[slot] else { continue }
                let file = folder.appendingPathComponent(externalName(snapshot, attribute))
                guard FileManager.default.fileExists(atPath: file.path) else { continue }
                do {
                    snapshot.values[slot] = .data(try Data(contentsOf: file))
                } catch {
                    throw DataStoreError(
                        .corrupted,
                        "the mutant store cannot read the external value '\(file.lastPathComponent)'",
                        remedy: "Restore the folder from a backup", underlyingError: ErrorText(error))
                }
            }
            return snapshot
        }
    }
}
