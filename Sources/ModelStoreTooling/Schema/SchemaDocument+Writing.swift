import ModelStore

extension SchemaDocument {
    /// The file's text: one model per block and one property per line, fields in a fixed order,
    /// and fields at their defaults left out; ends with a newline.
    package var jsonText: String {
        var lines = ["{"]
        if version != Schema.Version(1, 0, 0) { lines.append("  \"version\": \"\(version)\",") }
        lines.append("  \"models\": [")
        for (index, model) in models.enumerated() {
            lines.append("    {")
            var blocks = ["      \"name\": \(JSONValue.literal(model.name))"]
            if let original = model.originalName {
                blocks.append("      \"originalName\": \(JSONValue.literal(original))")
            }
            if let superclass = model.superclass {
                blocks.append("      \"superclass\": \(JSONValue.literal(superclass))")
            }
            if model.isAbstract { blocks.append("      \"abstract\": true") }
            if !model.attributes.isEmpty {
                blocks.append(Self.list("attributes", model.attributes.map(Self.fields)))
            }
            if !model.relationships.isEmpty {
                blocks.append(Self.list("relationships", model.relationships.map(Self.fields)))
            }
            if !model.unique.isEmpty { blocks.append("      \"unique\": \(Self.nameLists(model.unique))") }
            if !model.indexes.isEmpty { blocks.append("      \"indexes\": \(Self.nameLists(model.indexes))") }
            lines.append(blocks.joined(separator: ",\n"))
            lines.append(index == models.count - 1 ? "    }" : "    },")
        }
        lines.append(enums.isEmpty && structs.isEmpty ? "  ]" : "  ],")
        if !enums.isEmpty {
            lines.append(Self.list("enums", enums.map(Self.fields), indent: "  ") + (structs.isEmpty ? "" : ","))
        }
        if !structs.isEmpty { lines.append(Self.list("structs", structs.map(Self.fields), indent: "  ")) }
        lines.append("}")
        return lines.joined(separator: "\n") + "\n"
    }

    private static func fields(_ enumeration: Enumeration) -> String {
        var cases: [String] = []
        var previous: Enumeration.Case?
        for one in enumeration.cases {
            let implicit = enumeration.implicitRawValue(named: one.name, after: previous)
            cases.append(
                one.rawValue == implicit
                    ? JSONValue.literal(one.name)
                    : object([
                        ("name", JSONValue.literal(one.name)),
                        ("rawValue", DefaultValueText.json(.value(one.rawValue), type: enumeration.rawType)),
                    ]))
            previous = one
        }
        return object([
            ("name", JSONValue.literal(enumeration.name)),
            ("rawType", JSONValue.literal(enumeration.rawType.description)),
            ("cases", "[" + cases.joined(separator: ", ") + "]"),
        ])
    }

    private static func fields(_ structure: Structure) -> String {
        let fields = structure.fields.map { field in
            object([("name", JSONValue.literal(field.name)), ("type", JSONValue.literal(field.type.description))])
        }
        return object([
            ("name", JSONValue.literal(structure.name)), ("fields", "[" + fields.joined(separator: ", ") + "]"),
        ])
    }

    private static func list(_ key: String, _ objects: [String], indent: String = "      ") -> String {
        "\(indent)\"\(key)\": [\n" + objects.map { indent + "  " + $0 }.joined(separator: ",\n") + "\n\(indent)]"
    }

    private static func fields(_ attribute: Attribute) -> String {
        var fields = [
            ("name", JSONValue.literal(attribute.name)), ("type", JSONValue.literal(attribute.type.description)),
        ]
        switch TypeSpelling.namedType(in: attribute.type)?.kind {
        case .enumeration(let raw)?: fields.append(("rawType", JSONValue.literal(raw.description)))
        case .composite?: fields.append(("codable", "true"))
        case nil: break
        }
        if attribute.unique { fields.append(("unique", "true")) }
        if attribute.externalStorage { fields.append(("externalStorage", "true")) }
        if attribute.preserveValueOnDeletion { fields.append(("preserveValueOnDeletion", "true")) }
        if let original = attribute.originalName { fields.append(("originalName", JSONValue.literal(original))) }
        if let value = attribute.defaultValue {
            fields.append(("default", DefaultValueText.json(value, type: attribute.type)))
        }
        return object(fields)
    }

    private static func fields(_ relationship: Relationship) -> String {
        var fields = [
            ("name", JSONValue.literal(relationship.name)),
            ("destination", JSONValue.literal(relationship.destination)),
        ]
        if relationship.toMany { fields.append(("toMany", "true")) }
        if relationship.deleteRule != .nullify {
            fields.append(("deleteRule", JSONValue.literal(relationship.deleteRule.rawValue)))
        }
        if let inverse = relationship.inverse { fields.append(("inverse", JSONValue.literal(inverse))) }
        if relationship.minimumModelCount != 0 {
            fields.append(("minimumModelCount", String(relationship.minimumModelCount)))
        }
        if relationship.maximumModelCount != 0 {
            fields.append(("maximumModelCount", String(relationship.maximumModelCount)))
        }
        if let original = relationship.originalName { fields.append(("originalName", JSONValue.literal(original))) }
        return object(fields)
    }

    private static func object(_ fields: [(String, String)]) -> String {
        "{" + fields.map { "\"\($0.0)\": \($0.1)" }.joined(separator: ", ") + "}"
    }

    private static func nameLists(_ lists: [[String]]) -> String {
        "[" + lists.map { "[" + $0.map(JSONValue.literal).joined(separator: ", ") + "]" }.joined(separator: ", ") + "]"
    }
}
