import Foundation
import ModelStore

/// A store's models read without a schema: what ``AppendLogStore/models(at:)`` returns, for tools
/// that copy or print a store without the app's model types.
public struct AppendLogContents: Sendable {
    /// A model: its identifier and its values by property name.
    public struct Model: Sendable, Hashable {
        /// The model's identifier.
        public let id: PersistentIdentifier
        /// Its values by property name, in the newest file's shape.
        public let values: [String: StoreValue]
    }

    /// The store's identifier.
    public let storeIdentifier: String
    /// The entity shapes of the newest file.
    public let entities: [AppendLogEntityShape]
    /// Every model, in identifier order.
    public let models: [Model]
}

extension AppendLogStore {
    /// A description of the open store, from memory: entities and counts, files and sizes, dead fraction.
    public var info: AppendLogInfo {
        let (counts, checkpoint, segments, last, live, dead) = state.withLock { state in
            (
                Dictionary(uniqueKeysWithValues: schema.entities.map { ($0.name, state.table.count(of: $0.name)) }),
                state.checkpoint, state.segments, state.lastTransaction, state.liveBytes,
                state.deadFraction(baseline: baseline)
            )
        }
        let history = ((try? layout.list().history) ?? []).map { ($0, FileSystem.size(of: layout.historyURL($0))) }
        return AppendLogInfo(
            directory: directory, storeIdentifier: identifier, shapes: shapes, counts: counts, checkpoint: checkpoint,
            segments: segments, history: history, transactionCount: last, liveByteCount: live, deadFraction: dead)
    }

    /// Describes the append log in `directory` without opening it: no schema and no lock needed.
    ///
    /// Throws ``DataStoreError/Code/notFound`` if the directory is not an append log, and
    /// ``DataStoreError/Code/corrupted`` if its manifest is unreadable. Damage further in is not
    /// thrown: counts then reflect the log up to the damage; ``verify(at:)`` reports it.
    public static func inspect(at directory: URL) throws -> AppendLogInfo {
        let analysis = try LogAnalysis.run(directory: directory, keepValues: true, checkHistory: false)
        return try info(of: analysis)
    }

    /// Checks every file of the append log in `directory` without opening it: every checksum,
    /// every record's structure and transaction numbering, the manifest, the checkpoint, the live
    /// segments and `history/`. It writes nothing and needs no schema or lock.
    ///
    /// Throws ``DataStoreError/Code/notFound`` if the directory is not an append log. Damage is
    /// reported in the result, not thrown.
    public static func verify(at directory: URL) throws -> AppendLogVerification {
        let analysis = try LogAnalysis.run(directory: directory, keepValues: true, checkHistory: true)
        let info = try? info(of: analysis)
        var torn: AppendLogTornTail?
        if let tail = analysis.torn {
            torn = AppendLogTornTail(
                segment: LogLayout.segmentName(tail.number), offset: tail.offset,
                droppedByteCount: tail.byteCount - tail.offset, reason: tail.reason, savedAs: nil)
        }
        return AppendLogVerification(info: info, problems: analysis.problems, tornTail: torn)
    }

    /// Reads every model of the append log in `directory` without a schema, as opening would see them.
    ///
    /// Throws ``DataStoreError/Code/corrupted`` (with an ``AppendLogDamage``) if the live log is damaged.
    public static func models(at directory: URL) throws -> AppendLogContents {
        let analysis = try LogAnalysis.run(directory: directory, keepValues: true, checkHistory: false)
        if let damage = analysis.firstDamage { throw damage.error(directory: analysis.layout.directory) }
        guard let manifest = analysis.manifest else { throw DataStoreError.corrupted }
        guard let shapes = analysis.newestShapes else {
            return AppendLogContents(storeIdentifier: manifest.storeIdentifier, entities: [], models: [])
        }
        let target = analysis.shapeTables.firstIndex(of: shapes) ?? 0
        let models = analysis.models.sorted { $0.key < $1.key }.map { id, model -> AppendLogContents.Model in
            var values: [String: StoreValue] = [:]
            let converted = analysis.shapeTables.isEmpty ? model.values : analysis.convert(model, to: target)
            if let code = shapes.code(of: model.entityName), let converted {
                for (property, value) in zip(shapes.entities[code].properties, converted) { values[property.name] = value }
            }
            return AppendLogContents.Model(id: id, values: values)
        }
        return AppendLogContents(storeIdentifier: manifest.storeIdentifier, entities: shapes.entities, models: models)
    }

    private static func info(of analysis: LogAnalysis) throws -> AppendLogInfo {
        guard let manifest = analysis.manifest else {
            throw (analysis.firstDamage ?? AppendLogDamage(file: Manifest.fileName, offset: 0, reason: "unreadable"))
                .error(directory: analysis.layout.directory)
        }
        var counts: [String: Int] = [:]
        for model in analysis.models.values { counts[model.entityName, default: 0] += 1 }
        let shapes = analysis.newestShapes
        let live = analysis.liveBytes
        let total = analysis.logBytes
        let baseline = try shapes.map { try CheckpointFile.baselineBytes(storeIdentifier: manifest.storeIdentifier, shapes: $0) } ?? 0
        let dead = total > 0 ? min(1, max(0, 1 - Double(live + baseline) / Double(total))) : 0
        return AppendLogInfo(
            directory: analysis.layout.directory, storeIdentifier: manifest.storeIdentifier, shapes: shapes, counts: counts,
            checkpoint: analysis.checkpoint, segments: analysis.segments, history: analysis.history,
            transactionCount: analysis.lastTransaction, liveByteCount: live, deadFraction: dead)
    }
}
