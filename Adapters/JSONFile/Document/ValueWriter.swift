import Foundation
import ModelStore

/// Writes ``StoreValue``s in the document's value forms (see `FORMAT.md`).
///
/// A value of the kind its shape expects is written in its natural form (`3`, `"Rome"`,
/// `[1, 2]`); any other value, and every value of a kind JSON cannot tell apart (`UInt64`,
/// `Decimal`, `Date`, …) inside self-describing composites, is written as a one-key tag object.
struct ValueWriter {
    let out: JSONOutput
    /// The identifier of the store whose models references point to by key alone.
    let storeIdentifier: String

    // MARK: Shaped values

    /// Writes a value in the natural form of `shape`, or as a tag when it does not have that form.
    func write(_ value: StoreValue, as shape: ValueShape) {
        // Switch on the value first: the common scalar cases then need only a cheap check of the shape.
        switch value {
        case .null:
            out.ascii("null")
            return
        case .string(let string):
            if case .string = shape {
                out.string(string)
                return
            }
        case .int(let int):
            if case .int = shape {
                out.int(int)
                return
            }
        case .double(let double):
            switch shape {
            case .double:
                writeDouble(double)
                return
            case .float where double.isNaN || Double(Float(double)) == double:
                if double.isFinite { out.raw(Float(double).description) } else { writeNonFinite(double) }
                return
            default: break
            }
        case .date(let date):
            if case .date = shape {
                writeDouble(date.timeIntervalSinceReferenceDate)
                return
            }
        case .bool(let bool):
            if case .bool = shape {
                bool ? out.ascii("true") : out.ascii("false")
                return
            }
        case .uint(let uint):
            if case .uint64 = shape {
                out.uint(uint)
                return
            }
        case .decimal(let decimal):
            if case .decimal = shape, !decimal.isNaN {
                out.string(decimal.description)
                return
            }
        case .data(let data):
            if case .data = shape {
                out.base64(data)
                return
            }
        case .uuid(let uuid):
            if case .uuid = shape {
                out.uuid(uuid)
                return
            }
        case .url(let url):
            if case .url = shape, url.baseURL == nil {
                out.string(url.relativeString)
                return
            }
        case .reference(let id):
            if case .toOne(let destination) = shape {
                writeKey(of: id, destination: destination)
                return
            }
        case .references(let ids):
            if case .toMany(let destination) = shape {
                out.byte(UInt8(ascii: "["))
                for (index, id) in ids.enumerated() {
                    if index > 0 { out.bytes(UInt8(ascii: ","), UInt8(ascii: " ")) }
                    writeKey(of: id, destination: destination)
                }
                out.byte(UInt8(ascii: "]"))
                return
            }
        case .array, .dictionary:
            break
        }
        if case .any = shape {
            writeAny(value)
            return
        }
        writeContainer(value, as: shape)
    }

    /// Arrays and dictionaries in their shapes' natural forms, anything else as a tag.
    private func writeContainer(_ value: StoreValue, as shape: ValueShape) {
        switch (shape, value) {
        case (.array(let element), .array(let items)):
            out.byte(UInt8(ascii: "["))
            for (index, item) in items.enumerated() {
                if index > 0 { out.bytes(UInt8(ascii: ","), UInt8(ascii: " ")) }
                write(item, as: element)
            }
            out.byte(UInt8(ascii: "]"))
        case (.stringDictionary(let valueShape), .dictionary(let dictionary)):
            writeObject(dictionary) { write($0, as: valueShape) }
        case (.pairs(let keyShape, let valueShape), .array(let items)) where items.allSatisfy(Self.isPair):
            out.byte(UInt8(ascii: "["))
            for (index, item) in items.enumerated() {
                guard case .array(let pair) = item else { continue }
                if index > 0 { out.bytes(UInt8(ascii: ","), UInt8(ascii: " ")) }
                out.byte(UInt8(ascii: "["))
                write(pair[0], as: keyShape)
                out.bytes(UInt8(ascii: ","), UInt8(ascii: " "))
                write(pair[1], as: valueShape)
                out.byte(UInt8(ascii: "]"))
            }
            out.byte(UInt8(ascii: "]"))
        default:
            writeTagged(value)
        }
    }

    private static func isPair(_ value: StoreValue) -> Bool {
        if case .array(let pair) = value, pair.count == 2 { return true }
        return false
    }

    /// A reference written by its key alone when it points into this store's `destination`, else as a tag.
    private func writeKey(of id: PersistentIdentifier, destination: String) {
        guard id.storeIdentifier == storeIdentifier, id.entityName == destination else {
            writeTagged(.reference(id))
            return
        }
        writePrimaryKey(id.primaryKey)
    }

    func writePrimaryKey(_ key: PrimaryKey) {
        switch key {
        case .int(let int): out.int(int)
        case .string(let string): out.string(string)
        }
    }

    // MARK: Self-describing values

    /// Writes a value so that it reads back as the same case with no shape to help: JSON's own
    /// kinds in natural form, every other case as a tag.
    func writeAny(_ value: StoreValue) {
        switch value {
        case .null: out.ascii("null")
        case .bool(let bool): bool ? out.ascii("true") : out.ascii("false")
        case .int(let int): out.int(int)
        case .double(let double) where double.isFinite: out.double(double)
        case .string(let string): out.string(string)
        case .array(let items):
            out.byte(UInt8(ascii: "["))
            for (index, item) in items.enumerated() {
                if index > 0 { out.bytes(UInt8(ascii: ","), UInt8(ascii: " ")) }
                writeAny(item)
            }
            out.byte(UInt8(ascii: "]"))
        case .dictionary(let dictionary):
            writeObject(dictionary) { writeAny($0) }
        default:
            writeTagged(value)
        }
    }

    /// Writes `{"$kind": content}`: the explicit form every value has.
    func writeTagged(_ value: StoreValue) {
        func open(_ tag: ValueTag) {
            out.byte(UInt8(ascii: "{"))
            out.key(tag.rawValue)
            out.byte(UInt8(ascii: " "))
        }
        switch value {
        case .null:
            out.ascii("null")
            return
        case .bool(let bool):
            open(.bool)
            bool ? out.ascii("true") : out.ascii("false")
        case .int(let int):
            open(.int)
            out.int(int)
        case .uint(let uint):
            open(.uint)
            out.uint(uint)
        case .double(let double):
            open(.double)
            writeDouble(double)
        case .decimal(let decimal):
            open(.decimal)
            out.string(decimal.isNaN ? "NaN" : decimal.description)
        case .string(let string):
            open(.string)
            out.string(string)
        case .date(let date):
            open(.date)
            writeDouble(date.timeIntervalSinceReferenceDate)
        case .data(let data):
            open(.data)
            out.base64(data)
        case .uuid(let uuid):
            open(.uuid)
            out.uuid(uuid)
        case .url(let url):
            open(.url)
            if let base = url.baseURL {
                out.ascii("{\"relative\": ")
                out.string(url.relativeString)
                out.ascii(", \"base\": ")
                out.string(base.absoluteString)
                out.byte(UInt8(ascii: "}"))
            } else {
                out.string(url.relativeString)
            }
        case .array(let items):
            open(.array)
            writeAny(.array(items))
        case .dictionary(let dictionary):
            open(.dictionary)
            writeAny(.dictionary(dictionary))
        case .reference(let id):
            open(.reference)
            writeIdentifier(id)
        case .references(let ids):
            open(.references)
            out.byte(UInt8(ascii: "["))
            for (index, id) in ids.enumerated() {
                if index > 0 { out.bytes(UInt8(ascii: ","), UInt8(ascii: " ")) }
                writeIdentifier(id)
            }
            out.byte(UInt8(ascii: "]"))
        }
        out.byte(UInt8(ascii: "}"))
    }

    /// `{"entity": "Trip", "key": 3, "store": "json-…"}` (`"store": null` for a temporary identifier).
    private func writeIdentifier(_ id: PersistentIdentifier) {
        out.ascii("{\"entity\": ")
        out.string(id.entityName)
        out.ascii(", \"key\": ")
        writePrimaryKey(id.primaryKey)
        out.ascii(", \"store\": ")
        if let store = id.storeIdentifier { out.string(store) } else { out.ascii("null") }
        out.byte(UInt8(ascii: "}"))
    }

    /// An object with keys in order (so equal dictionaries write equal text) and leading `$` escaped.
    private func writeObject(_ dictionary: [String: StoreValue], value: (StoreValue) -> Void) {
        out.byte(UInt8(ascii: "{"))
        let keys = dictionary.keys.sorted()
        for (index, key) in keys.enumerated() {
            if index > 0 { out.bytes(UInt8(ascii: ","), UInt8(ascii: " ")) }
            out.key(key, escapesDollar: true)
            out.byte(UInt8(ascii: " "))
            value(dictionary[key]!)
        }
        out.byte(UInt8(ascii: "}"))
    }

    // MARK: Numbers

    /// A finite double as a number; NaN and the infinities as the strings `"NaN"`, `"Infinity"`, `"-Infinity"`.
    /// Writes a `Double` (or a date's seconds) in its natural form: the shortest digits that read back
    /// to the same bits, or the string of a non-finite value.
    func writeDouble(_ double: Double) {
        if double.isFinite { out.double(double) } else { writeNonFinite(double) }
    }

    private func writeNonFinite(_ double: Double) {
        if double.isNaN {
            out.ascii("\"NaN\"")
        } else {
            double < 0 ? out.ascii("\"-Infinity\"") : out.ascii("\"Infinity\"")
        }
    }
}
