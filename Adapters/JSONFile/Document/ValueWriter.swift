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
        switch (shape, value) {
        case (_, .null): out.ascii("null")
        case (.any, _): writeAny(value)
        case (.bool, .bool(let bool)): bool ? out.ascii("true") : out.ascii("false")
        case (.int, .int(let int)): out.int(int)
        case (.uint64, .uint(let uint)): out.uint(uint)
        case (.double, .double(let double)): writeDouble(double)
        case (.float, .double(let double)) where double.isNaN || Double(Float(double)) == double:
            if double.isFinite { out.raw(Float(double).description) } else { writeNonFinite(double) }
        case (.decimal, .decimal(let decimal)) where !decimal.isNaN: out.string(decimal.description)
        case (.string, .string(let string)): out.string(string)
        case (.date, .date(let date)): writeDouble(date.timeIntervalSinceReferenceDate)
        case (.data, .data(let data)): out.base64(data)
        case (.uuid, .uuid(let uuid)): out.uuid(uuid)
        case (.url, .url(let url)) where url.baseURL == nil: out.string(url.relativeString)
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
        case (.toOne(let destination), .reference(let id)):
            writeKey(of: id, destination: destination)
        case (.toMany(let destination), .references(let ids)):
            out.byte(UInt8(ascii: "["))
            for (index, id) in ids.enumerated() {
                if index > 0 { out.bytes(UInt8(ascii: ","), UInt8(ascii: " ")) }
                writeKey(of: id, destination: destination)
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
    private func writeDouble(_ double: Double) {
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
