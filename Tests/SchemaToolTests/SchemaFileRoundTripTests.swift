import Foundation
import ModelStore
import ModelStoreTestSupport
import Testing

@testable import ModelStoreTooling

/// Seeded random schema files: what the tool writes it reads back as the same schema, the core
/// accepts their stored form, and the stored form converts back without loss but for initial
/// values (which stores do not record).
struct SchemaFileRoundTripTests {
    @Test(arguments: 0..<60)
    func aWrittenFileReadsBackAsTheSameSchema(seed: UInt64) throws {
        var random = SplitMix64(seed: seed)
        let document = RandomSchema.document(using: &random)
        let text = document.jsonText
        let read = try SchemaDocument.parse(Data(text.utf8), file: "random-\(seed).json")
        #expect(read == document, "seed \(seed):\n\(text)")

        let description = document.storedDescription
        #expect(throws: Never.self, "seed \(seed)") { try Schema(description) }
        var withoutDefaults = document
        for m in withoutDefaults.models.indices {
            for a in withoutDefaults.models[m].attributes.indices {
                withoutDefaults.models[m].attributes[a].defaultValue = nil
            }
        }
        #expect(SchemaDocument(description) == withoutDefaults, "seed \(seed)")
    }
}

/// Random schema documents in the canonical form the reader produces: inverses on both sides,
/// no default equal to the type's zero value.
enum RandomSchema {
    static func document(using random: inout SplitMix64) -> SchemaDocument {
        let count = Int.random(in: 1...4, using: &random)
        var models = (0..<count).map { index in
            SchemaDocument.Model(name: "Model\(index)", attributes: attributes(using: &random))
        }
        for index in models.indices {
            for number in 0..<Int.random(in: 0...2, using: &random) {
                let target = Int.random(in: 0..<count, using: &random)
                var relationship = SchemaDocument.Relationship(name: "link\(number)", destination: "Model\(target)")
                relationship.toMany = Bool.random(using: &random)
                relationship.deleteRule = [.nullify, .cascade, .deny, .noAction].randomElement(using: &random)!
                relationship.maximumModelCount = relationship.toMany ? Int.random(in: 0...3, using: &random) : 0
                if Bool.random(using: &random) { relationship.originalName = "old\(number)" }
                let mirrorName = "back\(index)x\(number)"
                if Bool.random(using: &random) && !(target == index) {
                    relationship.inverse = mirrorName
                    var mirror = SchemaDocument.Relationship(name: mirrorName, destination: "Model\(index)")
                    mirror.toMany = Bool.random(using: &random)
                    mirror.inverse = relationship.name
                    models[target].relationships.append(mirror)
                }
                models[index].relationships.append(relationship)
            }
            let constrainable = models[index].attributes.map(\.name)
            if constrainable.count >= 2 && Bool.random(using: &random) {
                models[index].unique.append(Array(constrainable.shuffled(using: &random).prefix(2)))
            }
            if let name = constrainable.randomElement(using: &random), Bool.random(using: &random) {
                models[index].indexes.append([name])
            }
        }
        var document = SchemaDocument(models: models)
        if Bool.random(using: &random) {
            let major = Int.random(in: 1...9, using: &random)
            document.version = Schema.Version(major, 0, Int.random(in: 0...3, using: &random))
        }
        return document
    }

    private static let types: [AttributeType] = [
        .bool, .integer(bits: 64, signed: true), .integer(bits: 16, signed: true), .integer(bits: 8, signed: false),
        .double, .float, .decimal, .string, .date, .data, .uuid, .url, .array(.string),
        .dictionary(key: .string, value: .integer(bits: 64, signed: true)),
        .enumeration(name: "Kind", rawValue: .string), .composite(name: "Address"),
    ]

    private static func attributes(using random: inout SplitMix64) -> [SchemaDocument.Attribute] {
        (0..<Int.random(in: 0...5, using: &random)).map { index in
            var type = types.randomElement(using: &random)!
            if Bool.random(using: &random) { type = .optional(type) }
            var attribute = SchemaDocument.Attribute(name: "value\(index)", type: type)
            attribute.unique = Int.random(in: 0..<4, using: &random) == 0
            attribute.externalStorage = Int.random(in: 0..<6, using: &random) == 0
            attribute.preserveValueOnDeletion = Int.random(in: 0..<6, using: &random) == 0
            if Bool.random(using: &random) { attribute.originalName = "was\(index)" }
            attribute.defaultValue = defaultValue(for: type, using: &random)
            return attribute
        }
    }

    private static func defaultValue(for type: AttributeType, using random: inout SplitMix64)
        -> SchemaDocument.DefaultValue?
    {
        guard Bool.random(using: &random) else { return nil }
        let value: StoreValue
        switch type.unwrapped {
        case .bool: value = .bool(true)
        case .integer(bits: 64, signed: true): value = .int(Int64.random(in: -1_000_000...1_000_000, using: &random))
        case .integer(bits: 16, signed: true): value = .int(Int64.random(in: -32768...32767, using: &random))
        case .integer: value = .int(Int64.random(in: 1...255, using: &random))
        case .double: value = .double(Double(Int.random(in: -999...999, using: &random)) / 8)
        case .float: value = .double(Double(Float(Int.random(in: 1...999, using: &random)) / 4))
        case .decimal: value = .decimal(Decimal(Int.random(in: 1...99_999, using: &random)) / 100)
        case .string:
            let texts = ["x", "say \"hi\"", "tab\there", "line\n", "ünï", "a\\b"]
            value = .string(texts.randomElement(using: &random)!)
        case .date:
            if Bool.random(using: &random) { return .now }
            value = .date(Date(timeIntervalSince1970: Double(Int.random(in: 0...2_000_000_000, using: &random)) + 0.25))
        case .uuid: value = .uuid(UUID())
        case .url: value = .url(URL(string: "https://example.com/\(Int.random(in: 1...9, using: &random))")!)
        case .enumeration: value = .string("case\(Int.random(in: 1...3, using: &random))")
        default: return nil
        }
        return .value(value)
    }
}
