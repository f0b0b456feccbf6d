import Foundation

/// A filter with its operands taken out: what a store's translation of the filter depends on,
/// so that a store can cache the translation (its SQL text and where each operand binds) per shape.
///
/// Two filters have the same shape when they differ only in their operands' values, and each
/// operand has the same kind in both (``StoreValue/shapeKind``): `email == "a@x"` and
/// `email == "b@x"` share a shape; `email == "a@x"` and `email == nil` do not.
/// ``operands`` lists the operands in a fixed order: the order a depth-first walk of the filter meets them
/// (a comparison's value; a membership's values; a range's lower, then upper bound; a text test's
/// text, as a ``StoreValue/string(_:)``; an array test's element).
public struct StoreFilterShape: Sendable, Hashable {
    /// The filter with each operand replaced by a placeholder for its kind.
    public let skeleton: StoreFilter
    /// The operands, in the order described on the type.
    public let operands: [StoreValue]

    /// The shape of a filter, or `nil` for one a store cannot cache by shape: a filter of
    /// ``StoreFilter/identifiers(_:)``, whose translation depends on which identifiers it holds.
    public init?(_ filter: StoreFilter) {
        var operands: [StoreValue] = []
        guard let skeleton = Self.skeleton(filter, operands: &operands) else { return nil }
        self.skeleton = skeleton
        self.operands = operands
    }

    /// The filter of this shape with other operands, given in the order of ``operands`` (as many,
    /// each of the kind the skeleton names; a store's cached translation assumes so).
    public func filter(operands: [StoreValue]) -> StoreFilter {
        var next = operands.makeIterator()
        return Self.fill(skeleton, from: &next)
    }

    /// The filter of this shape with the operands `pool[sources[0]]`, `pool[sources[1]]`, and so
    /// on, without gathering them into a list first; `nil` when one of them is `nil`.
    func filter(picking sources: [Int], from pool: [StoreValue?]) -> StoreFilter? {
        for source in sources where pool[source] == nil { return nil }
        var next = Picked(sources: sources, pool: pool)
        return Self.fill(skeleton, from: &next)
    }

    /// The operands a ``filter(picking:from:)`` picks, in order.
    private struct Picked: IteratorProtocol {
        let sources: [Int]
        let pool: [StoreValue?]
        var position = 0

        mutating func next() -> StoreValue? {
            guard position < sources.count else { return nil }
            defer { position += 1 }
            return pool[sources[position]]
        }
    }

    private static func fill<Operands: IteratorProtocol<StoreValue>>(
        _ skeleton: StoreFilter, from next: inout Operands
    ) -> StoreFilter {
        func take() -> StoreValue { next.next() ?? .null }
        func text() -> String {
            if case .string(let text) = take() { return text }
            return ""
        }
        switch skeleton {
        case .constant, .identifiers: return skeleton
        case .compare(let path, let op, _): return .compare(path, op, take())
        case .isIn(let path, let values): return .isIn(path, values.map { _ in take() })
        case .range(let path, let range):
            let lower = range.lower.map { _ in take() }
            let upper = range.upper.map { _ in take() }
            return .range(path, StoreRange(lower: lower, upper: upper, includesUpper: range.includesUpper))
        case .text(let path, .contains): return .text(path, .contains(text()))
        case .text(let path, .hasPrefix): return .text(path, .hasPrefix(text()))
        case .text(let path, .matchesRegex): return .text(path, .matchesRegex(text()))
        case .arrayContains(let path, _): return .arrayContains(path, take())
        case .any(let path, let inner): return .any(path, fill(inner, from: &next))
        case .all(let path, let inner): return .all(path, fill(inner, from: &next))
        case .and(let items): return .and(items.map { fill($0, from: &next) })
        case .or(let items): return .or(items.map { fill($0, from: &next) })
        case .not(let item): return .not(fill(item, from: &next))
        }
    }

    /// Equal when the skeletons are: the operands are what may differ.
    public static func == (lhs: StoreFilterShape, rhs: StoreFilterShape) -> Bool { lhs.skeleton == rhs.skeleton }

    /// Hashes the skeleton only.
    public func hash(into hasher: inout Hasher) { hasher.combine(skeleton) }

    private static func skeleton(_ filter: StoreFilter, operands: inout [StoreValue]) -> StoreFilter? {
        func take(_ value: StoreValue) -> StoreValue {
            operands.append(value)
            return value.shapeCode.map { .int(Int64($0)) } ?? .string(value.shapeKind)
        }
        switch filter {
        case .constant: return filter
        case .identifiers: return nil
        case .compare(let path, let op, let value): return .compare(path, op, take(value))
        case .isIn(let path, let values): return .isIn(path, values.map(take))
        case .range(let path, let range):
            let lower = range.lower.map(take)
            let upper = range.upper.map(take)
            return .range(path, StoreRange(lower: lower, upper: upper, includesUpper: range.includesUpper))
        case .text(let path, let operation):
            switch operation {
            case .contains(let text):
                operands.append(.string(text))
                return .text(path, .contains(""))
            case .hasPrefix(let text):
                operands.append(.string(text))
                return .text(path, .hasPrefix(""))
            case .matchesRegex(let pattern):
                operands.append(.string(pattern))
                return .text(path, .matchesRegex(""))
            }
        case .arrayContains(let path, let value): return .arrayContains(path, take(value))
        case .any(let path, let inner):
            return skeleton(inner, operands: &operands).map { .any(path, $0) }
        case .all(let path, let inner):
            return skeleton(inner, operands: &operands).map { .all(path, $0) }
        case .and(let items): return skeletons(items, operands: &operands).map { .and($0) }
        case .or(let items): return skeletons(items, operands: &operands).map { .or($0) }
        case .not(let item): return skeleton(item, operands: &operands).map { .not($0) }
        }
    }

    private static func skeletons(_ items: [StoreFilter], operands: inout [StoreValue]) -> [StoreFilter]? {
        var skeletons: [StoreFilter] = []
        skeletons.reserveCapacity(items.count)
        for item in items {
            guard let part = skeleton(item, operands: &operands) else { return nil }
            skeletons.append(part)
        }
        return skeletons
    }
}

extension StoreValue {
    /// ``shapeKind`` as a number, with the same distinctions, or `nil` for a reference (whose kind
    /// names its entity and store): cheaper to hash and compare.
    var shapeCode: Int? {
        switch self {
        case .null: 0
        case .bool: 1
        case .int: 2
        case .uint(let value): value > UInt64(Int64.max) ? 4 : 3
        case .double(let value): value.isNaN ? 6 : 5
        case .decimal(let value): value.isNaN ? 8 : 7
        case .string: 9
        case .date: 10
        case .data: 11
        case .uuid: 12
        case .url: 13
        case .array: 14
        case .dictionary: 15
        case .references: 16
        case .reference: nil
        }
    }

    /// The operand's kind as a ``StoreFilterShape`` keeps it: the case, and what a store's
    /// translation may decide by besides the case (a `NaN`; an unsigned value past `Int64.max`; the
    /// entity and store of a reference).
    public var shapeKind: String {
        switch self {
        case .double(let value): return value.isNaN ? "double NaN" : "double"
        case .decimal(let value): return value.isNaN ? "decimal NaN" : "decimal"
        case .uint(let value): return value > UInt64(Int64.max) ? "uint past Int64.max" : "uint"
        case .reference(let id):
            let key = id.primaryKey.intValue == nil ? "other key" : "integer key"
            return "reference \(id.entityName) \(id.storeIdentifier ?? "without store") \(key)"
        default: return kindName
        }
    }
}

extension StoreFilterShape {
    /// Whether `filter` has this shape (``StoreFilterShape/init(_:)`` of it would equal this one),
    /// decided without building its skeleton; when it has, its operands in the order of
    /// ``operands`` are appended to `operands`.
    ///
    /// A store that keeps a translation per shape can try the shapes it used last this way before
    /// it hashes a new shape.
    public func matches(_ filter: StoreFilter, operands: inout [StoreValue]) -> Bool {
        Self.match(filter, skeleton, &operands)
    }

    private static func match(_ filter: StoreFilter, _ skeleton: StoreFilter, _ operands: inout [StoreValue]) -> Bool {
        func take(_ value: StoreValue, _ placeholder: StoreValue) -> Bool {
            let expected: StoreValue = value.shapeCode.map { .int(Int64($0)) } ?? .string(value.shapeKind)
            guard expected == placeholder else { return false }
            operands.append(value)
            return true
        }
        switch (filter, skeleton) {
        case (.constant(let value), .constant(let expected)): return value == expected
        case (.compare(let path, let op, let value), .compare(let expectedPath, let expectedOp, let placeholder)):
            return path == expectedPath && op == expectedOp && take(value, placeholder)
        case (.isIn(let path, let values), .isIn(let expectedPath, let placeholders)):
            guard path == expectedPath, values.count == placeholders.count else { return false }
            for index in values.indices where !take(values[index], placeholders[index]) { return false }
            return true
        case (.range(let path, let range), .range(let expectedPath, let expected)):
            guard path == expectedPath, range.includesUpper == expected.includesUpper,
                (range.lower == nil) == (expected.lower == nil), (range.upper == nil) == (expected.upper == nil)
            else { return false }
            if let lower = range.lower, let placeholder = expected.lower, !take(lower, placeholder) { return false }
            if let upper = range.upper, let placeholder = expected.upper, !take(upper, placeholder) { return false }
            return true
        case (.text(let path, let operation), .text(let expectedPath, let expected)):
            guard path == expectedPath else { return false }
            switch (operation, expected) {
            case (.contains(let text), .contains), (.hasPrefix(let text), .hasPrefix),
                (.matchesRegex(let text), .matchesRegex):
                operands.append(.string(text))
                return true
            default: return false
            }
        case (.arrayContains(let path, let value), .arrayContains(let expectedPath, let placeholder)):
            return path == expectedPath && take(value, placeholder)
        case (.any(let path, let inner), .any(let expectedPath, let expected)),
            (.all(let path, let inner), .all(let expectedPath, let expected)):
            return path == expectedPath && match(inner, expected, &operands)
        case (.and(let items), .and(let expected)), (.or(let items), .or(let expected)):
            guard items.count == expected.count else { return false }
            for index in items.indices where !match(items[index], expected[index], &operands) { return false }
            return true
        case (.not(let item), .not(let expected)): return match(item, expected, &operands)
        default: return false
        }
    }
}
