import Foundation
import ModelStore
import PostgresNIO

/// One `$n` parameter of a translated filter, and how its value is made from the filter's
/// operands (``StoreFilterShape/operands``): so a plan kept for a shape binds the operands of
/// another filter of that shape without translating it again.
struct PostgreSQLParameter: Sendable {
    /// Where the value comes from. An index names an operand in ``StoreFilterShape/operands``.
    enum Source: Sendable {
        /// Keys the translator chose itself (an identifier list): the same for every use.
        case fixedKeys([Int64])
        /// An integer operand, as `bigint`.
        case int(Int)
        /// An integer operand, as `double precision` (compared with a double column).
        case intAsDouble(Int)
        /// An integer operand, as `numeric` (compared with a decimal column).
        case intAsDecimal(Int)
        /// A string operand, with U+0000 escaped as the store keeps it.
        case text(Int)
        /// A double operand that is not `NaN`.
        case double(Int)
        /// A date operand that is not `NaN`, as seconds since the reference date.
        case date(Int)
        /// A decimal operand that is not `NaN`.
        case decimal(Int)
        /// A Boolean operand.
        case bool(Int)
        /// A UUID operand.
        case uuid(Int)
        /// Integer operands, as one `bigint[]`.
        case ints([Int])
        /// String operands, as one `text[]`.
        case texts([Int])
        /// Reference operands to models of this store, as their keys in one `bigint[]`.
        case keys([Int])
        /// A reference operand to a model of this store, as its key.
        case key(Int)
        /// An array element operand, as the JSON text the store keeps it in.
        case elementJSON(Int)
    }

    let source: Source

    /// Appends the parameter's value for these operands; `false` when an operand does not give
    /// one (another kind, a `NaN`, a model of another store), so the caller translates anew.
    func append(to binds: inout PostgresBindings, from operands: [StoreValue], storeIdentifier: String) -> Bool {
        switch source {
        case .fixedKeys(let keys):
            binds.append(keys)
        case .int(let index):
            guard case .int(let value) = operands[index] else { return false }
            binds.append(value)
        case .intAsDouble(let index):
            guard case .int(let value) = operands[index] else { return false }
            binds.append(Double(value))
        case .intAsDecimal(let index):
            guard case .int(let value) = operands[index], (try? binds.append(Decimal(value))) != nil else {
                return false
            }
        case .text(let index):
            guard case .string(let value) = operands[index] else { return false }
            binds.append(ColumnType.escapingNUL(value))
        case .double(let index):
            guard case .double(let value) = operands[index], !value.isNaN else { return false }
            binds.append(value)
        case .date(let index):
            guard case .date(let value) = operands[index], !value.timeIntervalSinceReferenceDate.isNaN else {
                return false
            }
            binds.append(value.timeIntervalSinceReferenceDate)
        case .decimal(let index):
            guard case .decimal(let value) = operands[index], !value.isNaN, (try? binds.append(value)) != nil else {
                return false
            }
        case .bool(let index):
            guard case .bool(let value) = operands[index] else { return false }
            binds.append(value)
        case .uuid(let index):
            guard case .uuid(let value) = operands[index] else { return false }
            binds.append(value)
        case .ints(let indices):
            var values: [Int64] = []
            values.reserveCapacity(indices.count)
            for index in indices {
                guard case .int(let value) = operands[index] else { return false }
                values.append(value)
            }
            binds.append(values)
        case .texts(let indices):
            var values: [String] = []
            values.reserveCapacity(indices.count)
            for index in indices {
                guard case .string(let value) = operands[index] else { return false }
                values.append(ColumnType.escapingNUL(value))
            }
            binds.append(values)
        case .keys(let indices):
            var values: [Int64] = []
            values.reserveCapacity(indices.count)
            for index in indices {
                guard let key = Self.key(operands[index], storeIdentifier: storeIdentifier) else { return false }
                values.append(key)
            }
            binds.append(values)
        case .key(let index):
            guard let key = Self.key(operands[index], storeIdentifier: storeIdentifier) else { return false }
            binds.append(key)
        case .elementJSON(let index):
            guard let json = try? ColumnType.encoder.encode(operands[index]) else { return false }
            binds.append(String(decoding: json, as: UTF8.self))
        }
        return true
    }

    /// The key of a reference operand to a model of this store.
    private static func key(_ operand: StoreValue, storeIdentifier: String) -> Int64? {
        guard case .reference(let id) = operand, id.storeIdentifier == storeIdentifier else { return nil }
        return id.primaryKey.intValue
    }
}
