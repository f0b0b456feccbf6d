import Foundation
import ModelStore

/// Compares specimens attribute by attribute, naming the attributes that differ.
struct SpecimenField: Sendable {
    let name: String
    let equal: @Sendable (Specimen, Specimen) -> Bool
    let render: @Sendable (Specimen) -> String

    static func field<Value: Equatable & Sendable>(
        _ name: String, _ keyPath: any KeyPath<Specimen, Value> & Sendable
    ) -> SpecimenField {
        SpecimenField(
            name: name, equal: { exactlyEqual($0[keyPath: keyPath], $1[keyPath: keyPath]) },
            render: { renderExactly($0[keyPath: keyPath]) })
    }

    /// Every stored attribute of ``Specimen``.
    static let all: [SpecimenField] = [
        field("code", \.code), field("series", \.series), field("serial", \.serial), field("isActive", \.isActive),
        field("count", \.count), field("tiny", \.tiny), field("small", \.small), field("medium", \.medium),
        field("large", \.large), field("unsigned", \.unsigned), field("byte", \.byte), field("word", \.word),
        field("doubleWord", \.doubleWord), field("quadWord", \.quadWord), field("weight", \.weight),
        field("ratio", \.ratio), field("price", \.price), field("title", \.title), field("createdAt", \.createdAt),
        field("payload", \.payload), field("token", \.token), field("homepage", \.homepage),
        field("nickname", \.nickname), field("rank", \.rank), field("reviewedAt", \.reviewedAt), field("tags", \.tags),
        field("measurements", \.measurements), field("labelsByNumber", \.labelsByNumber), field("kind", \.kind),
        field("grade", \.grade), field("origin", \.origin), field("attachment", \.attachment),
    ]

    /// Fails naming every attribute of `found` that differs from `expected`.
    static func check(
        _ found: Specimen, equals expected: Specimen, _ context: String, in environment: CaseEnvironment
    ) throws {
        let differing = all.filter { !$0.equal(found, expected) }
        guard let first = differing.first else { return }
        let names = differing.map { "'Specimen.\($0.name)'" }.joined(separator: ", ")
        let swapped =
            differing.count > 3 ? " (most attributes differ: the store may have returned another model's row)" : ""
        throw environment.failure(
            "\(context): \(names) came back different from what was saved\(swapped): every value type MUST round-trip "
                + "exactly, down to the Unicode scalars of strings and the sign of zero",
            expected: "\(first.name) = \(first.render(expected))", found: "\(first.name) = \(first.render(found))")
    }

    /// Compares the specimens of a fresh fetch with what was saved under each identifier: a store that
    /// returns one model's row under another's identifier fails here even when the set of rows is right.
    static func checkByIdentifier(
        _ found: [Specimen], saved expected: [(id: PersistentIdentifier, values: Specimen)], _ context: String,
        in environment: CaseEnvironment
    ) throws {
        let byID = try environment.index(found, by: \.persistentModelID, context)
        try environment.checkEqual(
            found.count, expected.count,
            "\(context): the number of specimens differs from the number saved (models lost, duplicated or added)")
        for (id, values) in expected {
            let specimen = try environment.require(
                byID[id], "\(context): the specimen saved as '\(values.code)' is not fetched under its identifier \(id)"
            )
            try check(specimen, equals: values, "\(context), the specimen with identifier \(id)", in: environment)
        }
    }

    /// Compares every specimen of a fresh fetch with the seed, by code.
    static func checkAll(
        _ found: [Specimen], equal expected: [Specimen], _ context: String, in environment: CaseEnvironment
    ) throws {
        let byCode = Dictionary(found.map { ($0.code, $0) }, uniquingKeysWith: { first, _ in first })
        try environment.checkEqual(
            found.map(\.code).sorted(), expected.map(\.code).sorted(),
            "\(context): the set of specimens differs from the one saved (models lost, duplicated or added)")
        for specimen in expected {
            try check(
                try environment.require(byCode[specimen.code], "\(context): '\(specimen.code)' is missing"),
                equals: specimen, "\(context), specimen '\(specimen.code)'", in: environment)
        }
    }
}

/// A value compared more strictly than `==`: strings by their Unicode scalars (so `"e\u{301}mile"` and
/// `"émile"`, equal to Swift, differ), floating-point numbers by their bits (so `-0.0` and `0.0` differ).
///
/// A store MUST give back exactly the scalars and bits it was given; `==` alone would let a store that
/// normalizes strings or drops the sign of zero pass.
protocol ExactComparable {
    func isExactly(_ other: Self) -> Bool
}

extension String: ExactComparable {
    func isExactly(_ other: String) -> Bool { unicodeScalars.elementsEqual(other.unicodeScalars) }
}

extension Double: ExactComparable {
    func isExactly(_ other: Double) -> Bool { bitPattern == other.bitPattern || (isNaN && other.isNaN) }
}

extension Float: ExactComparable {
    func isExactly(_ other: Float) -> Bool { bitPattern == other.bitPattern || (isNaN && other.isNaN) }
}

extension Optional: ExactComparable where Wrapped: ExactComparable {
    func isExactly(_ other: Wrapped?) -> Bool {
        switch (self, other) {
        case (nil, nil): true
        case (let lhs?, let rhs?): lhs.isExactly(rhs)
        default: false
        }
    }
}

extension Array: ExactComparable where Element: ExactComparable {
    func isExactly(_ other: [Element]) -> Bool {
        count == other.count && zip(self, other).allSatisfy { $0.isExactly($1) }
    }
}

/// `==`, and for ``ExactComparable`` values also scalar- and bit-exact equality.
func exactlyEqual<Value: Equatable>(_ lhs: Value, _ rhs: Value) -> Bool {
    guard lhs == rhs else { return false }
    guard let exact = lhs as? any ExactComparable else { return true }
    func compare<E: ExactComparable>(_ lhs: E) -> Bool { (rhs as? E).map { lhs.isExactly($0) } ?? false }
    return compare(exact)
}

/// A value for a failure message, with strings' non-ASCII scalars spelled out (`"e\u{301}mile"`)
/// and the sign of zero shown, so two values that print alike can be told apart.
func renderExactly<Value>(_ value: Value) -> String {
    if let string = value as? String { return spelledOut(string) }
    if case .string(let string)? = value as? StoreValue { return ".string(\(spelledOut(string)))" }
    if case .double(let number)? = value as? StoreValue, number == 0 {
        return number.sign == .minus ? ".double(-0.0)" : ".double(0.0)"
    }
    if let string = value as? String? { return string.map(spelledOut) ?? "nil" }
    if let strings = value as? [String] { return "[" + strings.map(spelledOut).joined(separator: ", ") + "]" }
    return String(describing: value)
}

/// A string in quotes, every scalar outside printable ASCII written as `\u{…}`.
func spelledOut(_ string: String) -> String {
    let scalars = string.unicodeScalars.map { scalar in
        (0x20..<0x7F).contains(scalar.value) ? String(scalar) : "\\u{\(String(scalar.value, radix: 16))}"
    }
    return "\"" + scalars.joined() + "\""
}
