import Foundation
import ModelStore
import ModelStoreAdapterKit
import ModelStoreFileIO

/// Reads a store directory without a schema: the engine behind ``AppendLogStore/verify(at:)``,
/// ``AppendLogStore/inspect(at:)``, ``AppendLogStore/repair(at:)``, ``AppendLogStore/models(at:)``
/// and the schema-less compaction.
///
/// It replays the log into a map of identifiers to entity names and sizes (and, when asked, values
/// in the shape of the file that last wrote them). It does not stop at the first problem: after
/// damage in the live log it stops applying transactions but keeps checking the remaining files,
/// so a report lists everything that is wrong.
struct LogAnalysis {
    /// A live model.
    struct Model {
        /// The model's entity.
        var entityName: String
        /// The shape table its values are in (an index into ``LogAnalysis/shapeTables``).
        var shapeIndex: Int
        /// Its values, when values are kept.
        var values: [StoreValue]?
        /// Its estimated encoded size.
        var size: Int
    }

    let layout: LogLayout
    let keepValues: Bool
    var listing = LogLayout.Listing()
    var manifest: Manifest?
    /// Every problem found, in the order found.
    var problems: [AppendLogDamage] = []
    /// The first damage in the live log (manifest, checkpoint or segments); replay stopped there.
    var firstDamage: AppendLogDamage?
    /// The live segment that holds ``firstDamage``, if it is in a segment.
    var damagedSegment: UInt64?
    var checkpoint: CheckpointSummary?
    var checkpointHeader: CheckpointHeader?
    /// The live segments, as read.
    var segments: [SegmentSummary] = []
    /// The headers of the live segments that have one, by number.
    var segmentHeaders: [UInt64: SegmentHeader] = [:]
    /// The torn tail of the last segment, if it ends in one.
    var torn: (number: UInt64, offset: Int, byteCount: Int, reason: AppendLogTornTail.Reason)?
    var lastTransaction: UInt64 = 0
    /// The distinct shape tables met, oldest first; the last is the newest.
    var shapeTables: [ShapeTable] = []
    var models: [PersistentIdentifier: Model] = [:]
    /// History segments: number and size.
    var history: [(number: UInt64, byteCount: Int)] = []

    /// Analyses the store in `directory`.
    ///
    /// Throws ``DataStoreError/Code/notFound`` if the directory is not an append log; damage is
    /// reported in ``problems``, not thrown.
    static func run(
        directory: URL, keepValues: Bool, checkHistory: Bool = true, cipher: LogCipher? = nil
    ) throws -> LogAnalysis {
        var analysis = LogAnalysis(
            layout: LogLayout(directory: directory.standardizedFileURL, cipher: cipher), keepValues: keepValues)
        try analysis.run(checkHistory: checkHistory)
        return analysis
    }

    private mutating func run(checkHistory: Bool) throws {
        listing = try layout.list()
        guard listing.hasManifest else {
            throw DataStoreError(
                .notFound, "'\(layout.directory.path)' is not an append log: it has no manifest",
                remedy: listing.segments.isEmpty
                    ? "Check the path"
                    : "If it is an append log whose manifest was lost, run AppendLogStore.repair(at:)")
        }
        do {
            manifest = try Manifest.decode(
                try OpenFile(layout.manifestURL, writable: false).readAll(), url: layout.manifestURL)
        } catch let error as DataStoreError {
            guard let damage = error.underlyingError as? AppendLogDamage else { throw error }
            record(damage)
            return
        }
        readCheckpoint()
        readSegments()
        checkSyncedMark()
        if checkHistory { readHistory() }
    }

    private mutating func record(_ damage: AppendLogDamage, segment: UInt64? = nil) {
        problems.append(damage)
        if firstDamage == nil {
            firstDamage = damage
            damagedSegment = segment
        }
    }

    private var replaying: Bool { firstDamage == nil }

    private mutating func shapeIndex(_ shapes: ShapeTable) -> Int {
        if let last = shapeTables.last, last == shapes { return shapeTables.count - 1 }
        if let index = shapeTables.firstIndex(of: shapes) { return index }
        shapeTables.append(shapes)
        return shapeTables.count - 1
    }

    private mutating func readCheckpoint() {
        guard let manifest, let name = manifest.checkpoint else { return }
        do {
            let url = layout.url(name)
            guard FileIO.exists(url) else {
                throw AppendLogDamage(file: name, offset: 0, reason: "the checkpoint the manifest names is missing")
            }
            let bytes = try OpenFile(url, writable: false).readAll()
            var index = 0
            var staged: [PersistentIdentifier: Model] = [:]
            let (header, _) = try CheckpointFile.read(bytes, name: name, cipher: layout.cipher) { row, size in
                guard staged[row.id] == nil else { throw ReplayProblem(reason: "the checkpoint holds \(row.id) twice") }
                staged[row.id] = Model(
                    entityName: row.id.entityName, shapeIndex: index, values: keepValues ? row.values : nil, size: size)
            } onHeader: { header in
                guard header.storeIdentifier == manifest.storeIdentifier, header.baseSegment == manifest.firstSegment
                else {
                    throw AppendLogDamage(
                        file: name, offset: 0,
                        reason: "the checkpoint does not match the manifest's store or first segment")
                }
                index = shapeIndex(header.shapes)
            }
            models = staged
            checkpointHeader = header
            lastTransaction = header.lastTransaction
            checkpoint = CheckpointSummary(
                name: name, byteCount: bytes.count, lastTransaction: header.lastTransaction,
                modelCount: header.modelCount, created: header.created)
        } catch let damage as AppendLogDamage {
            record(damage)
        } catch {
            record(AppendLogDamage(file: name, offset: 0, reason: "the checkpoint cannot be read: \(error)"))
        }
    }

    private mutating func readSegments() {
        guard let manifest else { return }
        let numbers = listing.segments.filter { $0 >= manifest.firstSegment }
        for (position, number) in numbers.enumerated() {
            let name = LogLayout.segmentName(number)
            let isLast = position == numbers.count - 1
            let expected = manifest.firstSegment + UInt64(position)
            if number != expected && replaying {
                let missing = numbers[..<position].last.map { $0 + 1 } ?? manifest.firstSegment
                record(
                    AppendLogDamage(
                        file: LogLayout.segmentName(missing), offset: 0,
                        reason: "the segment is missing, but later segments exist"),
                    segment: missing)
            }
            do {
                let bytes = try OpenFile(layout.segmentURL(number), writable: false).readAll()
                let applying = replaying
                let scanner = SegmentScanner(
                    name: name, number: number, isLast: isLast, storeIdentifier: manifest.storeIdentifier,
                    firstTransaction: applying ? lastTransaction + 1 : nil, cipher: layout.cipher)
                var index: Int?
                let result = try scanner.scan(bytes) { record, _, _, context in
                    guard applying else { return }
                    if index == nil { index = shapeIndex(context.shapes) }
                    try apply(record, shapeIndex: index!)
                }
                if let header = result.header { segmentHeaders[number] = header }
                if applying, let last = result.lastTransaction { lastTransaction = last }
                if let reason = result.torn { torn = (number, result.end, result.byteCount, reason) }
                segments.append(
                    SegmentSummary(
                        number: number, byteCount: result.byteCount,
                        firstTransaction: result.header?.firstTransaction ?? lastTransaction + 1,
                        transactionCount: result.recordCount))
            } catch let damage as AppendLogDamage {
                record(damage, segment: number)
                segments.append(
                    SegmentSummary(
                        number: number, byteCount: FileIO.size(of: layout.segmentURL(number)),
                        firstTransaction: lastTransaction + 1, transactionCount: 0))
            } catch {
                record(
                    AppendLogDamage(file: name, offset: 0, reason: "the segment cannot be read: \(error)"),
                    segment: number)
            }
        }
    }

    /// Reports a log that holds fewer transactions than its `synced` mark says were synced.
    private mutating func checkSyncedMark() {
        guard replaying, let synced = SyncedMark.read(directory: layout.directory), synced > lastTransaction,
            let last = segments.last
        else { return }
        let torn = torn.map { $0.number == last.number } ?? false
        record(
            SyncedMark.truncation(
                synced: synced, last: lastTransaction, segment: LogLayout.segmentName(last.number),
                end: torn ? self.torn!.offset : last.byteCount, torn: torn),
            segment: last.number)
    }

    private mutating func apply(_ record: TransactionRecord, shapeIndex: Int) throws {
        let shapes = shapeTables[shapeIndex]
        for deleted in record.deleted {
            guard models.removeValue(forKey: deleted.id) != nil else {
                throw ReplayProblem(reason: "deletes \(deleted.id), which does not exist")
            }
        }
        for change in record.updated {
            guard var model = models[change.id] else {
                throw ReplayProblem(reason: "updates \(change.id), which does not exist")
            }
            if keepValues {
                if model.shapeIndex != shapeIndex {
                    model.values = convert(model, to: shapeIndex)
                    model.shapeIndex = shapeIndex
                }
                guard let code = shapes.code(of: change.id.entityName) else {
                    throw ReplayProblem(reason: "updates \(change.id), whose entity the segment's shapes lack")
                }
                let count = shapes.entities[code].properties.count
                for (slot, value) in change.values {
                    guard slot < count, model.values != nil else {
                        throw ReplayProblem(reason: "changes an unknown slot \(slot)")
                    }
                    model.size += EncodedSize.value(value) - EncodedSize.value(model.values![slot])
                    model.values![slot] = value
                }
            } else {
                for (_, value) in change.values { model.size += EncodedSize.value(value) / 2 }
            }
            models[change.id] = model
        }
        for row in record.inserted {
            guard models[row.id] == nil else { throw ReplayProblem(reason: "inserts \(row.id), which already exists") }
            var size = EncodedSize.identifier(row.id) + 1
            for value in row.values { size += EncodedSize.value(value) }
            models[row.id] = Model(
                entityName: row.id.entityName, shapeIndex: shapeIndex, values: keepValues ? row.values : nil, size: size
            )
        }
    }

    /// A model's values in another shape table, matched by property name (or original name).
    func convert(_ model: Model, to target: Int) -> [StoreValue]? {
        guard let values = model.values else { return nil }
        if model.shapeIndex == target { return values }
        let source = shapeTables[model.shapeIndex]
        let destination = shapeTables[target]
        guard let to = destination.code(of: model.entityName) else { return values }
        let targetProperties = destination.entities[to].properties
        guard let from = source.code(of: model.entityName) else { return values }
        let sourceProperties = source.entities[from].properties
        return targetProperties.map { property in
            if let index = sourceProperties.firstIndex(where: {
                $0.name == property.name || $0.name == property.originalName
            }), index < values.count {
                return values[index]
            }
            return property.emptyValue
        }
    }

    private mutating func readHistory() {
        guard let manifest else { return }
        for number in listing.history {
            let url = layout.historyURL(number)
            let name = LogLayout.historyDirectoryName + "/" + LogLayout.segmentName(number)
            history.append((number, FileIO.size(of: url)))
            do {
                let bytes = try OpenFile(url, writable: false).readAll()
                let scanner = SegmentScanner(
                    name: name, number: number, isLast: false, storeIdentifier: manifest.storeIdentifier,
                    firstTransaction: nil, cipher: layout.cipher)
                _ = try scanner.scan(bytes) { _, _, _, _ in }
            } catch let damage as AppendLogDamage {
                problems.append(damage)
            } catch {
                problems.append(AppendLogDamage(file: name, offset: 0, reason: "the segment cannot be read: \(error)"))
            }
        }
    }

    // MARK: Results

    /// The estimated size of the live models.
    var liveBytes: Int { models.values.reduce(0) { $0 + $1.size } }

    /// The size of the checkpoint and the live segments.
    var logBytes: Int { (checkpoint?.byteCount ?? 0) + segments.reduce(0) { $0 + $1.byteCount } }

    /// The newest shapes: those of the last segment with a header, or of the checkpoint.
    var newestShapes: ShapeTable? {
        for segment in segments.reversed() { if let header = segmentHeaders[segment.number] { return header.shapes } }
        return checkpointHeader?.shapes
    }
}
