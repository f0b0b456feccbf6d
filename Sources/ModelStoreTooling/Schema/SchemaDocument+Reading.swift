import Foundation
import ModelStore

extension SchemaDocument {
    /// Reads a schema file: this tool's form (`{"models": [...]}`) or the core's stored form
    /// (`Schema.Description`, `{"version": ..., "entities": [...]}`), alone or as `modelstore schema
    /// URL --json` prints it (under `"schema"`).
    ///
    /// Throws ``ToolError``: not found (exit 4) for a missing file, and `invalidSchema` (exit 7)
    /// naming the file, the path in the document and the problem for anything else.
    package static func read(file: String, relativeTo directory: URL? = nil) throws(ToolError) -> SchemaDocument {
        let url = URL(fileURLWithPath: file, relativeTo: directory)
        guard FileManager.default.fileExists(atPath: url.path) else {
            throw ToolError(
                .notFound, code: DataStoreError.Code.notFound.name, "there is no schema file at '\(url.path)'",
                remedy: "Check the path; a relative path starts from the current directory, "
                    + "'\(FileManager.default.currentDirectoryPath)'")
        }
        let data: Data
        do {
            data = try Data(contentsOf: url)
        } catch {
            throw ToolError(
                .failure, code: DataStoreError.Code.io.name, "the schema file '\(file)' could not be read: \(error)",
                remedy: "Check that it is a readable file")
        }
        do {
            return try parse(data, file: file)
        } catch {
            throw error.toolError
        }
    }

    /// Parses and checks the contents of a schema file named `file`.
    package static func parse(_ data: Data, file: String) throws(SchemaFileError) -> SchemaDocument {
        let problems = SchemaFileProblems(file: file)
        let root: JSONValue
        do {
            root = try JSONDecoder().decode(JSONValue.self, from: data)
        } catch {
            throw problems.error("", "it is not valid JSON (\(Self.reason(error)))", remedy: "Fix the JSON syntax")
        }
        guard case .object(let fields) = root else {
            throw problems.error(
                "", "the document is \(root.kind), not an object", remedy: "Write {\"models\": [...]}")
        }
        let document: SchemaDocument
        if fields["models"] == nil, fields["entities"] != nil {
            document = try coreForm(data, problems: problems)
        } else if fields["models"] == nil, case .object(let report)? = fields["schema"], report["entities"] != nil {
            document = try coreForm(data, problems: problems, inReport: true)
        } else {
            document = try SchemaFileReader(problems: problems).document(root)
        }
        try document.check(problems)
        return document.withImpliedInverses()
    }

    /// What `modelstore schema URL --json` prints: the stored form under `"schema"`.
    private struct SchemaReportFile: Decodable {
        package let schema: Schema.Description
    }

    /// A file in the core's `Schema.Description` form, alone or `inReport` as `schema URL --json` prints it.
    private static func coreForm(_ data: Data, problems: SchemaFileProblems, inReport: Bool = false)
        throws(SchemaFileError) -> SchemaDocument
    {
        do {
            let decoder = JSONDecoder()
            let description =
                inReport
                ? try decoder.decode(SchemaReportFile.self, from: data).schema
                : try decoder.decode(Schema.Description.self, from: data)
            return SchemaDocument(description)
        } catch let error as DecodingError {
            let (path, reason) = Self.location(error)
            throw problems.error(
                path, reason,
                remedy: "Write the file as 'modelstore schema URL --json' prints \"schema\", "
                    + "or in the form of 'modelstore schema export'")
        } catch {
            throw problems.error("", "\(error)", remedy: "Check the file")
        }
    }

    /// Where a decoding error happened, as a document path, and why.
    private static func location(_ error: DecodingError) -> (String, String) {
        switch error {
        case .typeMismatch(_, let context), .valueNotFound(_, let context), .dataCorrupted(let context):
            return (path(context.codingPath), context.debugDescription)
        case .keyNotFound(let key, let context):
            return (path(context.codingPath), "the field '\(key.stringValue)' is missing")
        @unknown default:
            return ("", "\(error)")
        }
    }

    /// `entities[2].properties[0]` from coding keys.
    private static func path(_ keys: [any CodingKey]) -> String {
        keys.reduce(into: "") { path, key in
            if let index = key.intValue {
                path += "[\(index)]"
            } else {
                path += (path.isEmpty ? "" : ".") + key.stringValue
            }
        }
    }

    /// The reason a JSON parse failed, without Foundation's wrapping.
    private static func reason(_ error: any Error) -> String {
        if case DecodingError.dataCorrupted(let context) = error {
            let underlying = (context.underlyingError as? NSError)?.userInfo[NSDebugDescriptionErrorKey] as? String
            return underlying ?? context.debugDescription
        }
        return "\(error)"
    }

    /// The document with each inverse named on both sides: a file may name it on one side only.
    package func withImpliedInverses() -> SchemaDocument {
        var document = self
        for (m, entity) in models.enumerated() {
            for (r, relationship) in entity.relationships.enumerated() where relationship.inverse == nil {
                let mirror = model(named: relationship.destination)?.relationships.first {
                    $0.destination == entity.name && $0.inverse == relationship.name
                }
                document.models[m].relationships[r].inverse = mirror?.name
            }
        }
        return document
    }
}

/// Reads this tool's form of a schema file, field by field, with the path of each.
private struct SchemaFileReader {
    package let problems: SchemaFileProblems

    package func document(_ root: JSONValue) throws(SchemaFileError) -> SchemaDocument {
        let fields = try object(root, at: "", allowed: ["version", "models", "enums", "structs"])
        var document = SchemaDocument(models: [])
        if let version = try string(fields, "version", at: "") {
            document.version = try self.version(version, at: "version")
        }
        for (index, value) in try array(fields["enums"] ?? .array([]), at: "enums").enumerated() {
            document.enums.append(try enumeration(value, at: "enums[\(index)]"))
        }
        // Struct fields may name enums and structs declared anywhere in the file: the names first.
        let structValues = try array(fields["structs"] ?? .array([]), at: "structs")
        var structNames: Set<String> = []
        for (index, value) in structValues.enumerated() {
            let path = "structs[\(index)]"
            structNames.insert(try name(try object(value, at: path, allowed: ["name", "fields"]), at: path))
        }
        let named = Self.namedTypes(enums: document.enums, structs: structNames)
        for (index, value) in structValues.enumerated() {
            document.structs.append(try structure(value, at: "structs[\(index)]", named: named))
        }
        guard let models = fields["models"] else {
            throw problems.error("", "the field 'models' is missing", remedy: "Write {\"models\": [...]}")
        }
        for (index, model) in try array(models, at: "models").enumerated() {
            document.models.append(try self.model(model, at: "models[\(index)]", named: named))
        }
        return document
    }

    /// What a name that is not built in stands for, from the file's "enums" and "structs".
    private static func namedTypes(enums: [SchemaDocument.Enumeration], structs: Set<String>)
        -> (String) -> TypeSpelling.Named?
    {
        let raw = Dictionary(enums.map { ($0.name, $0.rawType) }, uniquingKeysWith: { first, _ in first })
        return { name in raw[name].map { .enumeration(rawValue: $0) } ?? (structs.contains(name) ? .composite : nil) }
    }

    private func model(_ value: JSONValue, at path: String, named: (String) -> TypeSpelling.Named?)
        throws(SchemaFileError) -> SchemaDocument.Model
    {
        let fields = try object(
            value, at: path,
            allowed: [
                "name", "originalName", "superclass", "abstract", "attributes", "relationships", "unique", "indexes",
            ])
        var model = SchemaDocument.Model(name: try name(fields, at: path))
        model.originalName = try string(fields, "originalName", at: path)
        model.superclass = try string(fields, "superclass", at: path)
        model.isAbstract = try bool(fields, "abstract", at: path) ?? false
        for (index, attribute) in try array(fields["attributes"] ?? .array([]), at: "\(path).attributes").enumerated() {
            model.attributes.append(try self.attribute(attribute, at: "\(path).attributes[\(index)]", named: named))
        }
        for (index, relationship) in try array(fields["relationships"] ?? .array([]), at: "\(path).relationships")
            .enumerated()
        {
            model.relationships.append(try self.relationship(relationship, at: "\(path).relationships[\(index)]"))
        }
        model.unique = try nameLists(fields["unique"], at: "\(path).unique")
        model.indexes = try nameLists(fields["indexes"], at: "\(path).indexes")
        return model
    }

    private func attribute(_ value: JSONValue, at path: String, named: (String) -> TypeSpelling.Named?)
        throws(SchemaFileError) -> SchemaDocument.Attribute
    {
        let fields = try object(
            value, at: path,
            allowed: [
                "name", "type", "unique", "externalStorage", "preserveValueOnDeletion", "originalName", "default",
                "rawType", "codable",
            ])
        let name = try self.name(fields, at: path)
        guard let spelling = try string(fields, "type", at: path) else {
            throw problems.error(
                path, "the attribute '\(name)' has no 'type'", remedy: "Add \"type\": \"String\" or another type")
        }
        let rawType = try string(fields, "rawType", at: path)
        let codable = try bool(fields, "codable", at: path) ?? false
        var rawValueType: AttributeType?
        if let rawType {
            rawValueType = TypeSpelling.builtIn[rawType]
            guard let raw = rawValueType, raw != .data, raw != .date else {
                throw problems.error(
                    "\(path).rawType", "'\(rawType)' is not a raw type an enum can have",
                    remedy: "Use 'String' or an integer type")
            }
        }
        let type: AttributeType
        do {
            type = try TypeSpelling.parse(spelling) { name in
                rawValueType.map { .enumeration(rawValue: $0) } ?? (codable ? .composite : named(name))
            }
        } catch {
            throw problems.error(
                "\(path).type", error.message,
                remedy:
                    "Use Bool, Int, Int8…Int64, UInt…UInt64, Double, Float, Decimal, String, Date, Data, UUID, "
                    + "URL, optionals ('T?'), arrays ('[T]') or dictionaries ('[K: V]') of them; "
                    + "an enum needs \"rawType\" and a Codable struct \"codable\": true (or an entry in "
                    + "\"enums\" or \"structs\")")
        }
        if let (typeName, kind) = TypeSpelling.namedType(in: type), rawType != nil || codable,
            let declared = named(typeName), !Self.same(declared, kind)
        {
            throw problems.error(
                "\(path).\(rawType != nil ? "rawType" : "codable")",
                "'\(typeName)' is declared in \(Self.same(declared, .composite) ? "\"structs\"" : "\"enums\"") otherwise",
                remedy: "Leave out 'rawType' and 'codable' for a type the file declares")
        }
        var attribute = SchemaDocument.Attribute(name: name, type: type)
        attribute.unique = try bool(fields, "unique", at: path) ?? false
        attribute.externalStorage = try bool(fields, "externalStorage", at: path) ?? false
        attribute.preserveValueOnDeletion = try bool(fields, "preserveValueOnDeletion", at: path) ?? false
        attribute.originalName = try string(fields, "originalName", at: path)
        if let value = fields["default"] {
            attribute.defaultValue = try DefaultValueReading(problems: problems)
                .read(value, type: type, at: "\(path).default")
        }
        return attribute
    }

    private func relationship(_ value: JSONValue, at path: String) throws(SchemaFileError)
        -> SchemaDocument.Relationship
    {
        let fields = try object(
            value, at: path,
            allowed: [
                "name", "destination", "toMany", "deleteRule", "inverse", "minimumModelCount", "maximumModelCount",
                "originalName",
            ])
        let name = try self.name(fields, at: path)
        guard let destination = try string(fields, "destination", at: path) else {
            throw problems.error(
                path, "the relationship '\(name)' has no 'destination'",
                remedy: "Name the related model: \"destination\": \"Task\"")
        }
        var relationship = SchemaDocument.Relationship(name: name, destination: destination)
        relationship.toMany = try bool(fields, "toMany", at: path) ?? false
        if let rule = try string(fields, "deleteRule", at: path) {
            guard let deleteRule = Schema.Relationship.DeleteRule(rawValue: rule) else {
                throw problems.error(
                    "\(path).deleteRule", "'\(rule)' is not a delete rule",
                    remedy: "Use 'nullify', 'cascade', 'deny' or 'noAction'")
            }
            relationship.deleteRule = deleteRule
        }
        relationship.inverse = try string(fields, "inverse", at: path)
        relationship.minimumModelCount = try count(fields, "minimumModelCount", at: path)
        relationship.maximumModelCount = try count(fields, "maximumModelCount", at: path)
        relationship.originalName = try string(fields, "originalName", at: path)
        return relationship
    }

    private func enumeration(_ value: JSONValue, at path: String) throws(SchemaFileError)
        -> SchemaDocument.Enumeration
    {
        let fields = try object(value, at: path, allowed: ["name", "rawType", "cases"])
        let name = try self.name(fields, at: path)
        let spelling = try string(fields, "rawType", at: path) ?? "String"
        guard let rawType = TypeSpelling.builtIn[spelling], rawType == .string || Self.isInteger(rawType) else {
            throw problems.error(
                "\(path).rawType", "'\(spelling)' is not a raw type this tool declares",
                remedy: "Use 'String' or an integer type ('Int', 'Int16', ...)")
        }
        var enumeration = SchemaDocument.Enumeration(name: name, rawType: rawType, cases: [])
        let cases = try array(fields["cases"] ?? .array([]), at: "\(path).cases")
        guard !cases.isEmpty else {
            throw problems.error(
                "\(path).cases", "the enum '\(name)' has no cases", remedy: "List its cases: [\"open\"]")
        }
        for (index, value) in cases.enumerated() {
            let place = "\(path).cases[\(index)]"
            var one: SchemaDocument.Enumeration.Case
            if case .string(let caseName) = value {
                one = .init(
                    name: caseName,
                    rawValue: enumeration.implicitRawValue(named: caseName, after: enumeration.cases.last))
            } else {
                let caseFields = try object(value, at: place, allowed: ["name", "rawValue"])
                let caseName = try self.name(caseFields, at: place)
                let raw: StoreValue? =
                    switch (rawType, caseFields["rawValue"]) {
                    case (.string, .string(let text)?): .string(text)
                    case (.string, nil): .string(caseName)
                    case (_, .integer(let number)?) where rawType != .string: .int(number)
                    case (_, nil): enumeration.implicitRawValue(named: caseName, after: enumeration.cases.last)
                    default: nil
                    }
                guard let raw else {
                    throw problems.error(
                        "\(place).rawValue", "expected a raw value of type '\(rawType)'",
                        remedy: rawType == .string ? "Write \"rawValue\": \"text\"" : "Write \"rawValue\": 1")
                }
                one = .init(name: caseName, rawValue: raw)
            }
            guard SwiftNames.isIdentifier(one.name) else {
                throw problems.error(place, "'\(one.name)' is not a Swift identifier", remedy: "Rename the case")
            }
            if enumeration.cases.contains(where: { $0.name == one.name || $0.rawValue == one.rawValue }) {
                throw problems.error(
                    place, "the enum '\(name)' has the case '\(one.name)' or its raw value twice",
                    remedy: "Give each case its own name and raw value")
            }
            enumeration.cases.append(one)
        }
        return enumeration
    }

    /// Whether two readings of a type name agree (an enum with the same raw type, or a struct).
    private static func same(_ one: TypeSpelling.Named, _ other: TypeSpelling.Named) -> Bool {
        switch (one, other) {
        case (.enumeration(let a), .enumeration(let b)): a == b
        case (.composite, .composite): true
        default: false
        }
    }

    private static func isInteger(_ type: AttributeType) -> Bool {
        if case .integer = type { return true }
        return false
    }

    private func structure(_ value: JSONValue, at path: String, named: (String) -> TypeSpelling.Named?)
        throws(SchemaFileError) -> SchemaDocument.Structure
    {
        let fields = try object(value, at: path, allowed: ["name", "fields"])
        var structure = SchemaDocument.Structure(name: try name(fields, at: path), fields: [])
        for (index, value) in try array(fields["fields"] ?? .array([]), at: "\(path).fields").enumerated() {
            let place = "\(path).fields[\(index)]"
            let field = try object(value, at: place, allowed: ["name", "type"])
            let name = try self.name(field, at: place)
            guard let spelling = try string(field, "type", at: place) else {
                throw problems.error(place, "the field '\(name)' has no 'type'", remedy: "Add \"type\": \"String\"")
            }
            do {
                structure.fields.append(.init(name: name, type: try TypeSpelling.parse(spelling, named: named)))
            } catch {
                throw problems.error(
                    "\(place).type", error.message,
                    remedy: "Use a built-in type, or an enum or struct declared in \"enums\" or \"structs\"")
            }
        }
        return structure
    }

    // MARK: Fields

    private func object(_ value: JSONValue, at path: String, allowed: [String]) throws(SchemaFileError)
        -> [String: JSONValue]
    {
        guard case .object(let fields) = value else {
            throw problems.error(path, "expected an object, found \(value.kind)", remedy: "Write {\"name\": ...}")
        }
        if let unknown = fields.keys.sorted().first(where: { !allowed.contains($0) }) {
            throw problems.error(
                path.isEmpty ? unknown : "\(path).\(unknown)", "'\(unknown)' is not a field here",
                remedy: "The fields are " + allowed.map { "'\($0)'" }.joined(separator: ", "))
        }
        return fields
    }

    private func array(_ value: JSONValue, at path: String) throws(SchemaFileError) -> [JSONValue] {
        guard case .array(let elements) = value else {
            throw problems.error(path, "expected an array, found \(value.kind)", remedy: "Write [...]")
        }
        return elements
    }

    private func string(_ fields: [String: JSONValue], _ key: String, at path: String) throws(SchemaFileError)
        -> String?
    {
        guard let value = fields[key] else { return nil }
        guard case .string(let string) = value else {
            throw problems.error(
                join(path, key), "expected a string, found \(value.kind)", remedy: "Write \"\(key)\": \"...\"")
        }
        return string
    }

    private func bool(_ fields: [String: JSONValue], _ key: String, at path: String) throws(SchemaFileError) -> Bool? {
        guard let value = fields[key] else { return nil }
        guard case .bool(let bool) = value else {
            throw problems.error(
                join(path, key), "expected true or false, found \(value.kind)", remedy: "Write \"\(key)\": true")
        }
        return bool
    }

    private func count(_ fields: [String: JSONValue], _ key: String, at path: String) throws(SchemaFileError) -> Int {
        guard let value = fields[key] else { return 0 }
        guard case .integer(let count) = value, count >= 0, count <= Int32.max else {
            throw problems.error(join(path, key), "expected a count of 0 or more", remedy: "Write \"\(key)\": 1")
        }
        return Int(count)
    }

    private func name(_ fields: [String: JSONValue], at path: String) throws(SchemaFileError) -> String {
        guard let name = try string(fields, "name", at: path) else {
            throw problems.error(path, "the field 'name' is missing", remedy: "Add \"name\": \"...\"")
        }
        guard SwiftNames.isIdentifier(name) else {
            throw problems.error(
                join(path, "name"), "'\(name)' is not a Swift identifier",
                remedy: "Use letters, digits and '_', starting with a letter or '_', and no Swift keyword")
        }
        return name
    }

    private func nameLists(_ value: JSONValue?, at path: String) throws(SchemaFileError) -> [[String]] {
        guard let value else { return [] }
        var lists: [[String]] = []
        for (index, element) in try array(value, at: path).enumerated() {
            var names: [String] = []
            for (position, name) in try array(element, at: "\(path)[\(index)]").enumerated() {
                guard case .string(let name) = name else {
                    throw problems.error(
                        "\(path)[\(index)][\(position)]", "expected a property name, found \(name.kind)",
                        remedy: "Write a list of names: [\"title\", \"owner\"]")
                }
                names.append(name)
            }
            lists.append(names)
        }
        return lists
    }

    private func version(_ text: String, at path: String) throws(SchemaFileError) -> Schema.Version {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false).map { Int($0) }
        guard (1...3).contains(parts.count), parts.allSatisfy({ ($0 ?? -1) >= 0 }) else {
            throw problems.error(path, "'\(text)' is not a version", remedy: "Write \"version\": \"2.0.0\"")
        }
        let numbers = parts.compactMap { $0 } + [0, 0]
        return Schema.Version(numbers[0], numbers[1], numbers[2])
    }

    private func join(_ path: String, _ key: String) -> String { path.isEmpty ? key : "\(path).\(key)" }
}
