import Foundation
import ModelStore
import Testing

@testable import ModelStoreCommandLine
@testable import ModelStoreTooling

/// The export driver's support files (the ModelStoreSchemaExportSupport target, which this target
/// links): they list enums' cases and structs' fields from compiled types, and name what they cannot list.
struct ExportedValueTypesTests {
    @Test func theDriverReceivesTheFilesOfTheSupportTarget() throws {
        let folder = SchemaToolFixtures.folder.deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Sources/ModelStoreSchemaExportSupport")
        let names = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasSuffix(".swift") }
        try #require(names.contains("ExportedValueTypes.swift"))
        var files: [String: String] = [:]
        for name in names {
            files[name] = try String(contentsOf: folder.appendingPathComponent(name), encoding: .utf8)
        }
        #expect(ExportDriver.supportSources == files)
    }

    /// `Golden/Catalog.swift`, generated from `Fixtures/catalog.json`, exports back to that file:
    /// the round trip of enums (String and Int8, implicit and explicit raw values) and structs
    /// (nested, in arrays and dictionaries, with a key that is not the property's name).
    @Test func theGeneratedCatalogExportsAsTheFileItWasGeneratedFrom() throws {
        let (exported, warnings) = try SchemaToolFixtures.exported(Schema([Book.self]))
        #expect(warnings.isEmpty)
        #expect(exported.jsonText == (try SchemaToolFixtures.text("Fixtures/catalog.json")))
        let generated = try ModelCodeWriter(document: exported).file(source: "catalog.json")
        #expect(generated == (try SchemaToolFixtures.text("Golden/Catalog.swift")))
    }

    @Test func whatCannotBeListedIsNamedWithItsAttributeAndLeftUndeclared() throws {
        let (exported, warnings) = try SchemaToolFixtures.exported(Schema([Diary.self]))
        #expect(exported.enums.isEmpty && exported.structs.isEmpty)
        let attributes = try #require(exported.model(named: "Diary")).attributes.map { "\($0.name): \($0.type)" }
        #expect(
            attributes == [
                "mood: Mood", "moods: [Mood]", "tone: Tone?", "blob: Blob?", "entry: Entry?", "weight: Weight?",
                "pair: Pair<Int>?",
            ])
        try #require(warnings.count == 6)
        #expect(warnings[4].contains("its raw type 'Double' is not one a schema file declares"))
        #expect(warnings[5].contains("its name 'Pair<Int>' is not one a schema file can declare"))
        #expect(
            warnings[0]
                == "'Diary.mood' stores the enum 'Mood', whose cases the export cannot list: it is not CaseIterable, "
                + "so its cases cannot be listed. The file names 'Mood' without declaring it; add 'CaseIterable' to "
                + "'Mood', or list its cases under \"enums\" in the schema file before 'schema generate'")
        #expect(warnings[1].hasPrefix("'Diary.tone' stores the enum 'Tone', whose cases the export cannot list: "))
        #expect(warnings[1].contains("it has a description of its own, which hides its cases' names"))
        #expect(
            warnings[2].hasPrefix(
                "'Diary.blob' stores the Codable struct 'Blob', whose fields the export cannot list: "
                    + "it decodes itself as a single value, not as named fields."))
        #expect(warnings[3].hasPrefix("'Diary.entry' stores the Codable struct 'Entry', whose fields"))
        #expect(warnings[3].contains("its field 'mood' is of type 'Mood', which cannot be listed either"))
        let refusal = try #require(throws: ToolError.self) { try ModelCodeWriter(document: exported).file(source: "x") }
        #expect(refusal.message.contains("the enum 'Mood' that 'models[0].attributes[0].type' names"))
        var report = SchemaFileReport(source: "app", out: nil, text: exported.jsonText, what: "the schema")
        report.warnings = warnings
        let json = try JSONDecoder().decode(JSONValue.self, from: JSONEncoder().encode(report))
        guard case .object(let fields) = json, case .array(let listed)? = fields["warnings"] else {
            Issue.record("'schema export --json' has no \"warnings\": \(json)")
            return
        }
        #expect(listed == warnings.map(JSONValue.string), "--json lists the warnings")
    }
}

/// Not `CaseIterable`: its cases cannot be listed.
enum Mood: String, Codable {
    case calm, cross
}

/// Its own description hides the cases' names.
enum Tone: String, Codable, CaseIterable, CustomStringConvertible {
    case soft, loud
    var description: String { "tone \(rawValue)" }
}

/// Stored as one list, not as named fields.
struct Blob: Codable, Hashable {
    var bytes: [UInt8]
    init(from decoder: any Decoder) throws { bytes = try decoder.singleValueContainer().decode([UInt8].self) }
    func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(bytes)
    }
}

/// A struct with a field of an enum that cannot be listed.
struct Entry: Codable, Hashable {
    var text: String
    var mood: Mood?
}

/// Backed by a raw type schema files do not declare.
enum Weight: Double, Codable, CaseIterable {
    case light = 0.5
    case heavy = 2
}

/// Generic: its name is not a name a schema file can declare.
struct Pair<Value: Codable & Hashable>: Codable, Hashable {
    var first: Value
    var second: Value
}

final class Diary: PersistentModel {
    @Attribute var mood: Mood = .calm
    @Attribute var moods: [Mood] = []
    @Attribute var tone: Tone?
    @Attribute var blob: Blob?
    @Attribute var entry: Entry?
    @Attribute var weight: Weight?
    @Attribute var pair: Pair<Int>?

    let persistentBackingData = BackingData()
    init() {}
}
