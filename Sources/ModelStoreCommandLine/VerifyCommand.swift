import Foundation
import ModelStore
import ModelStoreTooling

/// `modelstore verify URL`: an integrity check that says where any damage is.
enum VerifyCommand: Command {
    static let name = "verify"
    static let arguments = ["URL"]
    static let summary = "check a store's integrity; exits 1 on any corruption and says where"
    static let details = """
        An append log is checked file by file without opening it (no lock, no writes): every
        checksum, every record's structure and transaction numbering, the manifest, the checkpoint,
        the live segments and history/. Each damaged place is named by file and byte offset. A
        torn tail (a save cut short by a crash, holding no transaction the log recorded as synced) is
        reported but is not damage; a log that lacks a transaction its 'synced' mark recorded is.
        Other stores are opened with the schema they record and read in full: a JSON file is
        parsed (damage is named by line, column and byte) and checked for duplicate identifiers,
        unique values and relationships that point nowhere. An SQLite store first gets SQLite's own
        integrity check and a check of its tables against the schema it records.

        Everything opening would refuse is reported: damage, a JSON file whose bytes do not match
        the checksum in its header (after a hand edit, 'modelstore seal' accepts it), and a format
        version this ModelStore does not read. The report names the schema version the store was
        written with: an app whose schema version is older refuses to open it.

        Files and folders of the store that other users may read or write (mode looser than
        0600 for files, 0700 for folders) are listed as warnings, each with the 'chmod' that makes
        it private; they do not make the store damaged.

        The exit status is 0 for a healthy store and 1 for a damaged one; 'modelstore repair'
        mends an append log.

        Examples:
          modelstore verify log:trips-log
          modelstore verify json:trips.json --json
        """

    static func run(_ invocation: Invocation, console: Console) throws -> any CommandReport {
        let reference = try StoreReference(invocation.arguments[0])
        let (maintenance, request) = try reference.maintenance(for: name)
        let path = request.location
        let permissions = StorePermissionWarning.all(at: path)
        let progress = console.progress()
        defer { progress.finish() }
        progress.phase("checking")
        let check = try maintenance.verify(request)
        if check.isComplete {
            return VerifyReport(
                url: reference.string, problems: check.problems, entities: check.entities, tornTail: check.note,
                remedy: check.remedy, schemaVersion: check.schemaVersion, permissionWarnings: permissions)
        }
        let databaseProblems = check.problems
        do {
            progress.phase("reading")
            let description = try reference.storedSchema(for: name)
            let store = try reference.open(schema: try Schema(description))
            defer { store.close() }
            let problems = try danglingReferences(in: store, file: path.path, progress: progress)
            return VerifyReport(
                url: reference.string, problems: databaseProblems + problems,
                entities: try EntityCount.all(in: store, progress: progress), tornTail: nil,
                remedy: "Fix the relationships by hand, or restore the store from a backup",
                schemaVersion: description.version, permissionWarnings: permissions)
        } catch let error as DataStoreError where Self.refusals.contains(error.code) {
            let damage = maintenance.problem(describing: error, request) ?? problem(error, file: path.path)
            return VerifyReport(
                url: reference.string, problems: databaseProblems + [damage], entities: nil, tornTail: nil,
                remedy: error.remedy, permissionWarnings: permissions)
        }
    }

    /// The codes of the errors an open throws for what is in the store's files (not for the tool's
    /// own circumstances, such as a lock): each is reported as a problem.
    private static let refusals: Set<DataStoreError.Code> = [.corrupted, .unsupportedFeature, .invalidSchema]

    /// The problem an error describes, at no known place in the store's file.
    private static func problem(_ error: DataStoreError, file: String) -> Problem {
        Problem(file: file, offset: nil, reason: error.message)
    }

    /// Every relationship that refers to a model the store does not hold, or to a model of
    /// another entity than the relationship's destination.
    private static func danglingReferences(
        in store: OpenedStore, file: String, progress: ProgressBar
    ) throws -> [Problem] {
        progress.phase("reading models", total: store.schema.entities.count)
        var snapshots: [DefaultSnapshot] = []
        for entity in store.schema.entities {
            snapshots += try store.snapshots(of: entity.name)
            progress.advance()
        }
        let known = Set(snapshots.map(\.persistentIdentifier))
        var problems: [Problem] = []
        progress.phase("checking relationships", total: snapshots.count)
        for snapshot in snapshots {
            defer { progress.advance() }
            for relationship in snapshot.entity.relationships {
                for target in snapshot.values[relationship.slot].referencedIdentifiers {
                    let place =
                        "\(snapshot.persistentIdentifier) refers through "
                        + "'\(snapshot.entity.name).\(relationship.name)'"
                    if target.entityName != relationship.destination {
                        problems.append(
                            Problem(
                                file: file, offset: nil,
                                reason: "\(place) to \(target), which is not a '\(relationship.destination)'"))
                    } else if !known.contains(target) {
                        problems.append(
                            Problem(
                                file: file, offset: nil, reason: "\(place) to \(target), which the store does not hold")
                        )
                    }
                }
            }
        }
        return problems
    }
}

/// What `verify` reports.
struct VerifyReport: CommandReport {
    let url: String
    let healthy: Bool
    let problems: [Problem]
    /// The entities and their counts as far as they could be read; `nil` when nothing could be.
    let entities: [EntityCount]?
    /// The unfinished end of an append log that opening would cut off (not damage).
    let tornTail: String?
    /// What to do about the damage; `nil` for a healthy store.
    let remedy: String?
    /// The schema version the store was written with (an app whose schema is older refuses to open it).
    let schemaVersion: String?
    /// The store's files and folders that other users may read or write (not damage).
    let permissionWarnings: [StorePermissionWarning]

    init(
        url: String, problems: [Problem], entities: [EntityCount]?, tornTail: String?, remedy: String?,
        schemaVersion: Schema.Version? = nil, permissionWarnings: [StorePermissionWarning] = []
    ) {
        self.permissionWarnings = permissionWarnings
        self.schemaVersion = schemaVersion?.description
        self.url = url
        healthy = problems.isEmpty
        self.problems = problems
        self.entities = entities
        self.tornTail = tornTail
        self.remedy = problems.isEmpty ? nil : remedy
    }

    var text: String {
        var lines: [String]
        if healthy {
            let models = entities.map { " (\(ReportFormat.count($0.reduce(0) { $0 + $1.modelCount }, "model")))" } ?? ""
            lines = ["\(url): healthy\(models)"]
        } else {
            lines = ["\(url): damaged, \(ReportFormat.count(problems.count, "problem")):"] + problems.map { "  \($0)" }
            if let remedy { lines.append(remedy) }
        }
        if let tornTail { lines.append("Torn tail (not damage): \(tornTail)") }
        lines += permissionWarnings.map { "Warning: \($0)" }
        if let schemaVersion, schemaVersion != Schema.Version(1, 0, 0).description {
            lines.append(
                "Written with schema version \(schemaVersion): an app whose schema version is older refuses to open it")
        }
        return lines.joined(separator: "\n")
    }

    var status: ExitStatus { healthy ? .success : .damaged }
}
