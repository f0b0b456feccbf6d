import ModelStore

/// A stored schema as a Mermaid entity-relationship diagram (`erDiagram`).
///
/// Each entity lists its attributes as `Type name` (`UK` for a unique attribute; a comment for
/// optional, enum and external-storage attributes and compound unique constraints). Each
/// relationship and its inverse make one line whose ends show the cardinalities: `o|` zero or one
/// (to-one), `o{` zero or more (to-many), `|{` one or more and `||` exactly one when a minimum
/// count says so. A relationship without an inverse can be shared, so its far end is `}o`.
/// A class hierarchy's entity is one box per class, holding the attributes the class declares (the
/// root's also the class attribute), and an "is a (subclass)" line from each class to its superclass.
struct MermaidDiagram {
    let description: Schema.Description

    /// The diagram's text, starting with `erDiagram`.
    var text: String {
        var lines = ["erDiagram"]
        var inheritance: [String] = []
        for entity in description.entities {
            let uniqueAlone = Set(entity.uniquenessConstraints.filter { $0.count == 1 }.map { $0[0] })
            // A hierarchy's entity is drawn as one box per class, each with the attributes it declares.
            let classes =
                entity.classes ?? [
                    Schema.ClassDescription(name: entity.name, superclassName: nil, ownPropertyNames: [])
                ]
            for (position, modelClass) in classes.enumerated() {
                let own = Set(modelClass.ownPropertyNames)
                let attributes = entity.properties.compactMap { property -> String? in
                    guard
                        entity.classes == nil || own.contains(property.name)
                            || (position == 0 && property.name == Schema.Entity.classAttributeName)
                    else { return nil }
                    return property.type.map { type in
                        let unique = uniqueAlone.contains(property.name)
                        return "        " + attributeLine(property, type: type, unique: unique, entity: entity)
                    }
                }
                // A box without attributes is named alone: some Mermaid versions reject an empty block.
                lines +=
                    attributes.isEmpty
                    ? ["    \(Self.identifier(modelClass.name))"]
                    : ["    \(Self.identifier(modelClass.name)) {"] + attributes + ["    }"]
                if let parent = modelClass.superclassName {
                    inheritance.append(
                        "    \(Self.identifier(parent)) ||--o| \(Self.identifier(modelClass.name)) : \"is a (subclass)\""
                    )
                }
            }
        }
        lines += inheritance
        lines += relationshipLines()
        return lines.joined(separator: "\n")
    }

    private func attributeLine(
        _ property: Schema.PropertyDescription, type: AttributeType, unique: Bool, entity: Schema.EntityDescription
    ) -> String {
        var notes: [String] = []
        if type.isOptional { notes.append("optional") }
        if case .enumeration(_, let raw) = type.unwrapped { notes.append("enum of \(raw)") }
        if property.options.contains("externalStorage") { notes.append("external storage") }
        let compound = entity.uniquenessConstraints.filter { $0.count > 1 && $0.contains(property.name) }
        for constraint in compound {
            notes.append("unique with " + constraint.filter { $0 != property.name }.joined(separator: " and "))
        }
        var line = "\(Self.typeName(type)) \(Self.identifier(property.name))"
        if unique { line += " UK" }
        if !notes.isEmpty { line += " \"\(notes.joined(separator: ", "))\"" }
        return line
    }

    /// One line per relationship, or per relationship and its inverse.
    private func relationshipLines() -> [String] {
        let entities = Dictionary(description.entities.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        var drawn: Set<String> = []
        var lines: [String] = []
        for entity in description.entities {
            for relationship in entity.properties where relationship.destination != nil {
                guard let destination = relationship.destination,
                    drawn.insert("\(entity.name).\(relationship.name)").inserted
                else { continue }
                let inverse = relationship.inverse.flatMap { name in
                    entities[destination]?.properties.first { $0.name == name && $0.destination == entity.name }
                }
                if let inverse { drawn.insert("\(destination).\(inverse.name)") }
                // The left end says how many `entity` models one `destination` model relates to.
                let left = inverse.map { Self.end($0, left: true) } ?? "}o"
                let right = Self.end(relationship, left: false)
                var label = Self.labelPart(relationship)
                if let inverse { label += " / " + Self.labelPart(inverse) }
                let ends = "\(Self.identifier(entity.name)) \(left)--\(right) \(Self.identifier(destination))"
                lines.append("    \(ends) : \"\(label)\"")
            }
        }
        return lines
    }

    /// The cardinality marker for the end a relationship points to.
    private static func end(_ relationship: Schema.PropertyDescription, left: Bool) -> String {
        let required = (relationship.minimumModelCount ?? 0) > 0
        if relationship.isToOne ?? true {
            return required ? "||" : (left ? "|o" : "o|")
        }
        return required ? (left ? "}|" : "|{") : (left ? "}o" : "o{")
    }

    /// `items (cascade)`: the relationship's name, with its delete rule unless it is the default.
    private static func labelPart(_ relationship: Schema.PropertyDescription) -> String {
        guard let rule = relationship.deleteRule, rule != .nullify else { return relationship.name }
        return "\(relationship.name) (\(rule.rawValue))"
    }

    /// A Mermaid attribute type for a stored type: `String`, `Int32`, `String[]`,
    /// `Dictionary(String-Int)`; optionality goes into the comment.
    static func typeName(_ type: AttributeType) -> String {
        switch type {
        case .optional(let wrapped): typeName(wrapped)
        case .array(let element): typeName(element) + "[]"
        case .dictionary(let key, let value): "Dictionary(\(typeName(key))-\(typeName(value)))"
        default: identifier(type.description)
        }
    }

    /// A name Mermaid accepts unquoted: letters, digits, `_` and `-`, starting with a letter.
    static func identifier(_ name: String) -> String {
        var result = String(
            name.unicodeScalars.map { scalar -> Character in
                scalar.isASCII
                    && (scalar.properties.isAlphabetic || ("0"..."9").contains(scalar) || scalar == "_"
                        || scalar == "-")
                    ? Character(scalar) : "_"
            })
        if let first = result.unicodeScalars.first, !first.properties.isAlphabetic { result = "_" + result }
        return result.isEmpty ? "_" : result
    }
}
