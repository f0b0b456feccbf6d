import Foundation
import ModelStore
import NIOCore
import PostgresNIO

/// One column of a batch of rows as one parameter: a one-dimensional PostgreSQL array (`bigint[]`,
/// `text[]`, …) in the binary form the server reads (`array_recv`), built one element at a time.
///
/// The form is a header (one dimension, whether an element is `NULL`, the element type, the length
/// and lower bound 1), then each element as its 32-bit length (`-1` for `NULL`) and its bytes, the
/// bytes PostgresNIO writes for the element's own parameter. An insert of many rows binds one per
/// column and unnests them (see ``RowWriter/insert(_:)``).
struct ColumnArray: PostgresDynamicTypeEncodable {
    /// The array's type (`int8[]`, …).
    let psqlType: PostgresDataType
    /// The type of its elements (`int8`, …).
    let elementType: PostgresDataType
    var psqlFormat: PostgresFormat { .binary }
    /// The elements, each with its length first.
    private(set) var elements = ByteBuffer()
    /// How many elements it has.
    private(set) var count = 0
    private var hasNull = false

    /// An empty array of `elementType` elements, whose array type is `arrayType`.
    init(of elementType: PostgresDataType, arrayType: PostgresDataType) {
        self.elementType = elementType
        psqlType = arrayType
    }

    /// An empty array for a column kept as `type` (`nil`: a to-one relationship's `bigint` key).
    init(for type: ColumnType?) {
        switch type {
        case .bool: self.init(of: .bool, arrayType: .boolArray)
        case .int, .uint64, nil: self.init(of: .int8, arrayType: .int8Array)
        case .double, .date: self.init(of: .float8, arrayType: .float8Array)
        case .decimal: self.init(of: .numeric, arrayType: .numericArray)
        case .string, .url: self.init(of: .text, arrayType: .textArray)
        case .data: self.init(of: .bytea, arrayType: .byteaArray)
        case .uuid: self.init(of: .uuid, arrayType: .uuidArray)
        case .encoded: self.init(of: .json, arrayType: .jsonArray)
        }
    }

    /// Appends a `NULL` element.
    mutating func appendNull() {
        elements.writeInteger(Int32(-1))
        count += 1
        hasNull = true
    }

    /// Appends an element, encoded as PostgresNIO encodes it as a parameter of its own type (which
    /// must be the array's element type).
    mutating func append<Value: PostgresEncodable>(_ value: Value) throws {
        let start = elements.writerIndex
        elements.writeInteger(Int32(0))
        try value.encode(into: &elements, context: .default)
        elements.setInteger(Int32(elements.writerIndex - start - 4), at: start)
        count += 1
    }

    /// Appends text bytes as an element (of a `text` or `json` array).
    mutating func append(text: String) {
        let start = elements.writerIndex
        elements.writeInteger(Int32(0))
        let written = elements.writeString(text)
        elements.setInteger(Int32(written), at: start)
        count += 1
    }

    /// Appends bytes as an element (of a `bytea` array).
    mutating func append(bytes: Data) {
        elements.writeInteger(Int32(bytes.count))
        elements.writeBytes(bytes)
        count += 1
    }

    /// How many bytes the array's elements take.
    var byteCount: Int { elements.readableBytes }

    func encode<JSONEncoder: PostgresJSONEncoder>(
        into byteBuffer: inout ByteBuffer, context: PostgresEncodingContext<JSONEncoder>
    ) {
        byteBuffer.writeInteger(Int32(1))
        byteBuffer.writeInteger(Int32(hasNull ? 1 : 0))
        byteBuffer.writeInteger(elementType.rawValue)
        byteBuffer.writeInteger(Int32(count))
        byteBuffer.writeInteger(Int32(1))
        byteBuffer.writeImmutableBuffer(elements)
    }
}

extension ColumnType {
    /// The SQL type of an array of the column's values (`bigint[]`).
    var arrayDeclaration: String { declaration + "[]" }

    /// Appends a value to the column's array as ``bind(_:to:)`` binds it to a parameter. The value
    /// must be of the column's own type (``bindsAsItself(_:)``): an array of the column's type
    /// cannot hold another.
    func append(_ value: StoreValue, to array: inout ColumnArray, of column: TableLayout.Column, in layout: TableLayout)
        throws
    {
        switch value {
        case .null: array.appendNull()
        case .bool(let v): try array.append(v)
        case .int(let v): self == .double ? try array.append(Double(v)) : try array.append(v)
        case .uint(let v): try array.append(Int64(bitPattern: v))
        case .double(let v): try array.append(v)
        case .decimal(let v): try array.append(v)
        case .string(let v): array.append(text: Self.escapingNUL(v))
        case .date(let v): try array.append(v.timeIntervalSinceReferenceDate)
        case .data(let v): array.append(bytes: v)
        case .uuid(let v): try array.append(v)
        case .url(let v): array.append(text: v.absoluteString)
        case .array, .dictionary:
            array.append(text: String(decoding: try Self.encoder.encode(value), as: UTF8.self))
        case .reference, .references:
            throw DataStoreError(
                .invalidValue,
                "'\(layout.entity.name).\(column.name)' is an attribute, and holds a \(value.kindName)",
                entityName: layout.entity.name, propertyNames: [column.name])
        }
    }
}
