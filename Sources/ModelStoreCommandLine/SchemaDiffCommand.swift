import Foundation
import ModelStore
import ModelStoreTooling

/// `modelstore schema diff --old SOURCE --new SOURCE [--out FILE]`: what changed between two
/// schemas, and a migration plan for it.
enum SchemaDiffCommand: Command {
    static let name = "schema diff"
    static let arguments: [String] = []
    static let options = [
        CommandOption(
            name: "--old", value: "SOURCE", summary: "the schema the store has now (file or store URL)",
            isRequired: true),
        CommandOption(
            name: "--new", value: "SOURCE", summary: "the schema to migrate to (file or store URL)",
            isRequired: true),
        CommandOption(name: "--out", value: "FILE", summary: "write the migration plan (Swift) here"),
    ]
    static let summary = "print what changed between two schemas; --out writes a migration plan (Swift)"
    static let details = """
        Prints each change, marked + (added), - (removed), ~ (changed) or > (renamed), and
        whether the store makes it by itself (lightweight) or it needs code (custom): a new
        unique attribute, an attribute that becomes unique, a new compound unique constraint, a
        type change other than becoming optional or required, a new destination, to-many
        becoming to-one, stricter count limits, a renamed model, a removed subclass, a class
        whose superclass changes and a class that becomes abstract. A new subclass, or a new
        property of one, is lightweight.

        A property is renamed when the new file gives it an "originalName". A model is renamed
        when the new file gives it an "originalName" (two models may not claim the same one),
        or, inferred, when a model only the old file has and a model only the new file has are
        each other's one match in attributes and relationships (destinations aside). The store
        cannot rename a model by itself, so the plan's custom stage copies it: willMigrate reads
        each old model's attributes, didMigrate creates the new ones from them, and a comment
        asks for the relationships to be set again.

        With --out it writes the plan: an enum per version conforming to VersionedSchema with
        that version's models declared inside (as 'schema generate' declares them), and
        'enum MigrationPlan: SchemaMigrationPlan' with one stage: lightweight, or custom with
        willMigrate and didMigrate stubs whose comments say what each change needs. If the new
        schema's version is not newer, the plan gives it the next major version.

        Examples:
          modelstore schema diff --old v1.json --new v2.json
          modelstore schema diff --old v1.json --new v2-renamed-models.json \\
              --out MigrationPlan.swift
          modelstore schema diff --old json:trips.json --new schema.json \\
              --out MigrationPlan.swift
        """

    static func run(_ invocation: Invocation, console: Console) throws -> any CommandReport {
        guard let oldSource = invocation.value("--old"), let newSource = invocation.value("--new") else {
            throw ToolError.usage(
                "'schema diff' needs the old and the new schema",
                remedy: "Write 'modelstore schema diff --old v1.json --new v2.json --out MigrationPlan.swift'")
        }
        let old = try SchemaSource.document(oldSource, for: "compare")
        var new = try SchemaSource.document(newSource, for: "compare")
        var notes: [String] = []
        if new.version <= old.version {
            let next = Schema.Version(old.version.major + 1, 0, 0)
            notes.append("'\(newSource)' is not newer than '\(oldSource)' (\(new.version)); the plan calls it \(next)")
            new.version = next
        }
        let diff = SchemaDiff(old: old, new: new)
        let out = invocation.value("--out")
        if let out {
            let plan = try MigrationPlanWriter(old: old, new: new, diff: diff).file(
                oldSource: URL(fileURLWithPath: oldSource).lastPathComponent,
                newSource: URL(fileURLWithPath: newSource).lastPathComponent)
            try SchemaSource.write(plan, to: out)
        }
        return SchemaDiffReport(
            old: oldSource, new: newSource, oldVersion: "\(old.version)", newVersion: "\(new.version)",
            stage: diff.needsCustomStage ? "custom" : "lightweight", changes: diff.changes.map(ChangeReport.init),
            notes: notes, out: out)
    }
}

/// What `schema diff` reports.
struct SchemaDiffReport: CommandReport {
    let old: String
    let new: String
    let oldVersion: String
    let newVersion: String
    /// `lightweight` or `custom`.
    let stage: String
    let changes: [ChangeReport]
    let notes: [String]
    /// Where the plan was written.
    let out: String?

    var text: String {
        var lines = ["\(old) (\(oldVersion)) -> \(new) (\(newVersion)): a \(stage) stage"]
        lines += notes.map { "note: \($0)" }
        if changes.isEmpty { lines.append("  no changes") }
        lines += ReportFormat.table(changes.map { ["\($0.mark) \($0.subject)", $0.summary, $0.stage] })
        for change in changes where change.reason != nil {
            lines.append("\(change.subject): \(change.reason ?? "")")
        }
        if let out { lines.append("wrote the migration plan to '\(out)'") }
        return lines.joined(separator: "\n")
    }
}

/// One change, as `schema diff` reports it.
struct ChangeReport: Encodable {
    let mark: String
    let subject: String
    let summary: String
    /// `lightweight` or `custom`.
    let stage: String
    /// Why it needs a custom stage.
    let reason: String?

    init(_ change: SchemaDiff.Change) {
        mark = String(change.mark)
        subject = change.subject
        summary = change.summary
        stage = change.needsCustomStage ? "custom" : "lightweight"
        reason = change.customReason
    }
}
