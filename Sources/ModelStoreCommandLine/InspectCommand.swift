import Foundation
import ModelStore
import ModelStoreTooling

/// `modelstore inspect URL`: what a store holds and what it occupies on disk.
enum InspectCommand: Command {
    static let name = "inspect"
    static let arguments = ["URL"]
    static let options = [
        CommandOption(name: "--exact", summary: "count every model, where the store would estimate large tables")
    ]
    static let summary = "entities, counts, schema version and sizes on disk; for a log, segments and dead fraction"
    static let details = """
        Reads the store's schema from its own files, so no model types are needed, and changes
        nothing (opening a JSON file creates its empty .lock file if it is missing). A JSON file is
        opened and counted; an append log is read without opening it (no lock is
        taken, so it can be inspected while an app has it open), and its checkpoint, segments,
        history and dead fraction (the share of the log that no longer describes live models) are
        listed. Damage met while reading is reported; 'modelstore verify' locates all of it.
        A store on a server (PostgreSQL) gives the counts of large tables from its statistics,
        marked as estimates, and lists its tables, indexes and history with their sizes; --exact
        counts every table's rows instead.

        Examples:
          modelstore inspect json:trips.json
          modelstore inspect log:trips-log --json
        """

    static func run(_ invocation: Invocation, console: Console) throws -> any CommandReport {
        let reference = try StoreReference(invocation.arguments[0])
        var (maintenance, request) = try reference.maintenance(for: name)
        request.countsExactly = invocation.has("--exact")
        let progress = console.progress()
        defer { progress.finish() }
        progress.phase("reading")
        if let inspection = try maintenance.inspect(request) {
            return InspectReport(
                reference: reference, storeIdentifier: inspection.storeIdentifier,
                schemaVersion: inspection.schemaVersion?.description, entities: inspection.entities,
                details: inspection.details, damage: inspection.damage)
        }
        progress.phase("opening")
        let description = try reference.storedSchema(for: name)
        let store = try reference.open(schema: try Schema(description))
        defer { store.close() }
        return InspectReport(
            reference: reference, storeIdentifier: store.identifier, schemaVersion: description.version.description,
            entities: try EntityCount.all(in: store, progress: progress), details: nil, damage: [])
    }
}

/// What `inspect` reports.
struct InspectReport: CommandReport {
    let url: String
    let scheme: String
    let storeIdentifier: String
    let schemaVersion: String?
    let entities: [EntityCount]
    let modelCount: Int
    let files: [StoreFile]
    let byteCount: Int
    /// What only this kind of store has (an append log's segments and dead fraction), under its own key.
    let details: StoreReportDetails?
    /// Damage met while reading (append logs); `verify` locates all of it.
    let damage: [Problem]
    /// Whether the store is files (a server's store has no files to list).
    let storesFiles: Bool

    init(
        reference: StoreReference, storeIdentifier: String, schemaVersion: String?, entities: [EntityCount],
        details: StoreReportDetails?, damage: [Problem]
    ) {
        url = reference.string
        scheme = reference.scheme.name
        self.storeIdentifier = storeIdentifier
        self.schemaVersion = schemaVersion
        self.entities = entities
        modelCount = entities.reduce(0) { $0 + $1.modelCount }
        files = reference.filesOnDisk()
        byteCount = files.reduce(0) { $0 + $1.byteCount }
        self.details = details
        self.damage = damage
        storesFiles = reference.storesFiles
    }

    var text: String {
        var lines = ["\(url)  (store '\(storeIdentifier)', schema version \(schemaVersion ?? "unknown"))", ""]
        lines += ["Entities:"] + EntityCount.lines(entities)
        if storesFiles {
            lines += ["", "On disk: \(ReportFormat.count(files.count, "file")), \(ReportFormat.bytes(byteCount))"]
            lines += ReportFormat.table(files.map { [$0.path, ReportFormat.bytes($0.byteCount)] })
        }
        if let details { lines += [""] + details.lines }
        if !damage.isEmpty {
            lines += ["", "Damaged (run 'modelstore verify \(url)' for details):"] + damage.map { "  \($0)" }
        }
        return lines.joined(separator: "\n")
    }

    var status: ExitStatus { damage.isEmpty ? .success : .damaged }

    private enum CodingKeys: String, CodingKey {
        case url, scheme, storeIdentifier, schemaVersion, entities, modelCount, files, byteCount, damage
    }

    /// The report's fields, with the store's own details under their key.
    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(url, forKey: .url)
        try container.encode(scheme, forKey: .scheme)
        try container.encode(storeIdentifier, forKey: .storeIdentifier)
        try container.encodeIfPresent(schemaVersion, forKey: .schemaVersion)
        try container.encode(entities, forKey: .entities)
        try container.encode(modelCount, forKey: .modelCount)
        try container.encode(files, forKey: .files)
        try container.encode(byteCount, forKey: .byteCount)
        try container.encode(damage, forKey: .damage)
        if let details {
            var nested = encoder.container(keyedBy: DetailsKey.self)
            try nested.encode(details, forKey: DetailsKey(details.key))
        }
    }
}

/// A key named at run time: the key of a store's own details in a report.
struct DetailsKey: CodingKey {
    let stringValue: String
    var intValue: Int? { nil }

    init(_ string: String) { stringValue = string }
    init?(stringValue: String) { self.init(stringValue) }
    init?(intValue: Int) { nil }
}
