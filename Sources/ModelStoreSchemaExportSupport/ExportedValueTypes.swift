// A file of the driver package that `modelstore schema export --package` writes and runs. It is compiled
// here as the ModelStoreSchemaExportSupport target, and the tool copies it into the driver unchanged.

import ModelStore

/// The enums and `Codable` structs that a schema's attributes store, in the schema file's form
/// (`"enums"` and `"structs"`), and those whose cases or fields the compiled types do not tell.
///
/// An enum's cases come from `CaseIterable` (names from the cases' own text, raw values from
/// `rawValue`); a struct's fields are the keys its `init(from:)` reads, answered with placeholders.
struct ExportedValueTypes: Encodable {
    /// A `RawRepresentable` enum: its name, raw type and cases.
    struct Enumeration: Encodable {
        let name: String
        let rawType: String
        let cases: [Case]
    }

    /// One case of an enum.
    struct Case: Encodable {
        let name: String
        let rawValue: RawValue
    }

    /// A raw value, as a schema file writes it: a string or an integer.
    enum RawValue: Encodable {
        case string(String)
        case integer(Int64)

        func encode(to encoder: any Encoder) throws {
            var container = encoder.singleValueContainer()
            switch self {
            case .string(let text): try container.encode(text)
            case .integer(let number): try container.encode(number)
            }
        }
    }

    /// A `Codable` struct: its name and its fields' keys and types.
    struct Structure: Encodable {
        let name: String
        let fields: [Field]
    }

    /// One field of a struct, its type spelled in Swift.
    struct Field: Encodable {
        let name: String
        let type: String
    }

    /// A type whose cases or fields the export cannot list, the first attribute that stores it and why.
    struct Unlisted: Encodable {
        let type: String
        /// `enum` or `struct`.
        let kind: String
        let attribute: String
        let reason: String
    }

    /// Why a type's cases or fields cannot be listed.
    struct Reason: Error {
        let text: String
        init(_ text: String) { self.text = text }
    }

    private(set) var enums: [Enumeration] = []
    private(set) var structs: [Structure] = []
    private(set) var unlisted: [Unlisted] = []
    private var visited: Set<String> = []

    private enum CodingKeys: String, CodingKey { case enums, structs, unlisted }

    /// The enums and structs that the attributes of `schema`'s model types store.
    init(_ schema: ModelStore.Schema) {
        for entity in schema.entities {
            for attribute in entity.attributes {
                guard let keyPath = attribute.keyPath else { continue }
                visit(type(of: keyPath).valueType, attribute: "\(entity.name).\(attribute.name)")
            }
        }
    }

    /// Lists the enums and structs `type` names; `false` when one of them cannot be listed.
    @discardableResult
    private mutating func visit(_ type: Any.Type, attribute: String) -> Bool {
        switch Self.storedType(type) {
        case .optional?, .array?, .dictionary?:
            let parts = (type as? any ExportedContainer.Type)?.partTypes ?? []
            return parts.map { visit($0, attribute: attribute) }.allSatisfy { $0 }
        case .enumeration(let name, let rawType)?:
            guard visited.insert(name).inserted else { return !unlisted.contains { $0.type == name } }
            do {
                try Self.checkName(name)
                enums.append(try Self.enumeration(type, name: name, rawType: rawType))
                return true
            } catch {
                unlisted.append(Unlisted(type: name, kind: "enum", attribute: attribute, reason: error.text))
                return false
            }
        case .composite(let name)?:
            guard visited.insert(name).inserted else { return !unlisted.contains { $0.type == name } }
            do {
                try Self.checkName(name)
                let structure = try structure(type, name: name, attribute: attribute)
                structs.append(structure)
                return true
            } catch {
                unlisted.append(Unlisted(type: name, kind: "struct", attribute: attribute, reason: error.text))
                return false
            }
        default:
            return true
        }
    }

    /// How ModelStore stores values of `type`, or `nil` if it cannot.
    static func storedType(_ type: Any.Type) -> ModelStore.AttributeType? {
        func open<T>(_: T.Type) -> ModelStore.AttributeType? {
            ModelStore.ValueCodecs.codec(for: T.self)?.attributeType
        }
        return _openExistential(type, do: open)
    }

    private static func enumeration(_ type: Any.Type, name: String, rawType: ModelStore.AttributeType)
        throws(Reason) -> Enumeration
    {
        switch rawType {
        case .string, .integer: break
        default: throw Reason("its raw type '\(rawType)' is not one a schema file declares (String or an integer type)")
        }
        guard let iterable = type as? any (RawRepresentable & CaseIterable).Type else {
            throw Reason("it is not CaseIterable, so its cases cannot be listed")
        }
        if type is any CustomStringConvertible.Type || type is any CustomDebugStringConvertible.Type
            || type is any TextOutputStreamable.Type
        {
            throw Reason("it has a description of its own, which hides its cases' names")
        }
        func cases<E: RawRepresentable & CaseIterable>(_: E.Type) -> [(name: String, rawValue: Any)] {
            E.allCases.map { (String(describing: $0), $0.rawValue) }
        }
        var listed: [Case] = []
        for (caseName, raw) in cases(iterable) {
            guard isIdentifier(caseName) else {
                throw Reason("its cases' names are not visible ('\(caseName)'); build it with reflection metadata")
            }
            let value: RawValue
            switch try? ModelStore.ValueCodecs.storeValue(of: raw) {
            case .string(let text)?: value = .string(text)
            case .int(let number)?: value = .integer(number)
            case .uint(let number)? where number <= UInt64(Int64.max): value = .integer(Int64(number))
            default: throw Reason("the raw value of its case '\(caseName)' cannot be written in a schema file")
            }
            listed.append(Case(name: caseName, rawValue: value))
        }
        return Enumeration(name: name, rawType: rawType.description, cases: listed)
    }

    private mutating func structure(_ type: Any.Type, name: String, attribute: String) throws(Reason) -> Structure {
        guard let decodable = type as? any Decodable.Type else { throw Reason("it is not Decodable") }
        let recorder = FieldRecorder()
        do {
            _ = try decodable.init(from: recorder)
        } catch let reason as Reason {
            throw reason
        } catch {
            throw Reason("its init(from:) failed on placeholder values: \(error)")
        }
        var fields: [Field] = []
        for field in recorder.fields {
            guard Self.isIdentifier(field.name) else { throw Reason("its key '\(field.name)' is not a Swift name") }
            guard let stored = Self.storedType(field.type) else {
                throw Reason("its field '\(field.name)' is of type '\(field.type)', which ModelStore cannot store")
            }
            guard visit(field.type, attribute: attribute) else {
                throw Reason("its field '\(field.name)' is of type '\(stored)', which cannot be listed either")
            }
            let spelled = field.isOptional && !stored.isOptional ? ModelStore.AttributeType.optional(stored) : stored
            fields.append(Field(name: field.name, type: spelled.description))
        }
        return Structure(name: name, fields: fields)
    }

    /// Throws unless a schema file can declare a type of this name (not a generic type's, `Pair<Int>`).
    private static func checkName(_ name: String) throws(Reason) {
        guard isIdentifier(name) else {
            throw Reason("its name '\(name)' is not one a schema file can declare")
        }
    }

    /// Whether `name` can be declared in Swift as it is: letters, digits and `_`, not first a digit.
    private static func isIdentifier(_ name: String) -> Bool {
        guard let first = name.unicodeScalars.first, !("0"..."9").contains(first) else { return false }
        return name.unicodeScalars.allSatisfy { scalar in
            scalar.isASCII && (scalar.properties.isAlphabetic || scalar == "_" || ("0"..."9").contains(scalar))
        }
    }
}

/// The types inside an optional, an array or a dictionary.
protocol ExportedContainer {
    static var partTypes: [Any.Type] { get }
}

extension Optional: ExportedContainer {
    static var partTypes: [Any.Type] { [Wrapped.self] }
}

extension Array: ExportedContainer {
    static var partTypes: [Any.Type] { [Element.self] }
}

extension Dictionary: ExportedContainer {
    static var partTypes: [Any.Type] { [Key.self, Value.self] }
}
