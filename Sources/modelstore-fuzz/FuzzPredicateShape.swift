import Foundation
import ModelStore

/// The fuzzer's bytes read as choices: each read takes the next byte (0 once they run out), so every
/// input, however short or long, decodes to one predicate.
struct FuzzChoices {
    private let bytes: [UInt8]
    private var index = 0

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    /// The next byte.
    mutating func byte() -> UInt8 {
        guard index < bytes.count else { return 0 }
        defer { index += 1 }
        return bytes[index]
    }

    /// One of `items`.
    mutating func pick<T>(_ items: [T]) -> T { items[Int(byte()) % items.count] }

    /// The next eight bytes as a 64-bit pattern.
    mutating func bits() -> UInt64 {
        (0..<8).reduce(UInt64(0)) { value, _ in value << 8 | UInt64(byte()) }
    }

    /// A string: mostly from a pool of near-misses, else up to 12 of the input's bytes as UTF-8.
    mutating func text() -> String {
        let choice = byte()
        if choice < 200 { return FuzzValues.texts[Int(choice) % FuzzValues.texts.count] }
        let length = Int(byte()) % 13
        return String(decoding: (0..<length).map { _ in byte() }, as: UTF8.self)
    }
}

/// The values the fuzzed data and predicates draw from: small pools, so equalities, ties, `nil`s,
/// `NaN`s, signed zeros and canonically equivalent strings are frequent.
enum FuzzValues {
    static let texts = [
        "", "a", "A", "ab", "Ab", "lamp", "Lamp", "LAMP", "\u{E9}", "e\u{301}", "\u{E9}b", "e\u{301}a",
        "\u{DF}",
        "ss", "SS", "\u{1F600}", "a b", "zz", "\u{0}", "\u{301}",
    ]
    static let ints = [-3, 0, 1, 2, 5, 9, 100, -100]
    static let doubles: [Double] = [
        -1, 0, -0.0, 0.5, 2, .nan, .infinity, -.infinity, 7.25, 1e308, .leastNonzeroMagnitude,
    ]
    static let decimals = ["0", "0.5", "0.50", "-1", "3", "1e20", "-0.0001"].map {
        Decimal(string: $0)!
    }
    static let dates = [0, 1_000, 1_000.000_5, -1e9, 2_000].map {
        Date(timeIntervalSinceReferenceDate: $0)
    }
    static let bigs: [UInt64] = [0, 1, .max, 1 << 63]
    static let smalls: [Int8] = [-128, -1, 0, 1, 127]
    static let ids: [UUID?] = [
        nil, UUID(uuidString: "00000000-0000-0000-0000-000000000001"),
        UUID(uuidString: "F0000000-0000-0000-0000-00000000000F"),
    ]
    static let links: [URL?] = [
        nil, URL(string: "https://example.com/a"), URL(string: "https://example.com/A"),
    ]
    /// Small operands of arithmetic, so no operation on stored counts overflows.
    static let operands = [-3, -1, 1, 2, 7]
}

/// A generated predicate over ``FuzzItem``, decoded from the fuzzer's bytes: comparisons of every
/// attribute kind, text operations, membership, ranges, arithmetic, optionals, quantifiers over the
/// to-many relationship, and `&&`, `||`, `!` and `? :` around them. Nothing in it can throw, so the
/// store and Swift must agree on every model.
indirect enum FuzzPredicateShape: CustomStringConvertible {
    typealias Operator = PredicateExpressions.ComparisonOperator

    case constant(Bool)
    case count(Operator, Int)
    case countEquals(Int, negated: Bool)
    case small(Operator, Int8)
    case big(Operator, UInt64)
    case ratio(Operator, Double)
    case ratioEquals(Double)
    case price(Operator, Decimal)
    case when(Operator, Date)
    case name(Operator, String)
    case nameEquals(String, negated: Bool)
    case nameContains(String)
    case namePrefix(String)
    case nameEmpty
    case nameLength(Operator, Int)
    case identifier(UUID?)
    case link(URL?)
    case tagsContain(String)
    case tagsEmpty
    case countIn([Int])
    case countInRange(Int, Int, closed: Bool)
    case sum(Int, Operator, Int)
    case product(Int, Operator, Int)
    case quotient(Int, Operator, Int)
    case remainder(Int, Int)
    case negated(Operator, Int)
    case partsAny(String)
    case partsAnyPrefix(String)
    case partsAll(Operator, String)
    case partsEmpty
    case and(FuzzPredicateShape, FuzzPredicateShape)
    case or(FuzzPredicateShape, FuzzPredicateShape)
    case not(FuzzPredicateShape)
    case conditional(FuzzPredicateShape, FuzzPredicateShape, FuzzPredicateShape)

    static let operators: [Operator] = [
        .lessThan, .lessThanOrEqual, .greaterThan, .greaterThanOrEqual,
    ]

    /// The shape the choices describe: at most four levels of logic, then a leaf.
    static func decode(_ choices: inout FuzzChoices, depth: Int = 0) -> FuzzPredicateShape {
        let kind = choices.byte()
        if depth < 4, kind >= 200 {
            switch kind % 4 {
            case 0: return .and(decode(&choices, depth: depth + 1), decode(&choices, depth: depth + 1))
            case 1: return .or(decode(&choices, depth: depth + 1), decode(&choices, depth: depth + 1))
            case 2: return .not(decode(&choices, depth: depth + 1))
            default:
                return .conditional(
                    decode(&choices, depth: depth + 1), decode(&choices, depth: depth + 1),
                    decode(&choices, depth: depth + 1))
            }
        }
        let op = choices.pick(operators)
        switch kind % 30 {
        case 0: return .constant(choices.byte() % 2 == 0)
        case 1:
            let value =
                choices.byte() < 128
                ? choices.pick(FuzzValues.ints) : Int(Int64(bitPattern: choices.bits()))
            return .count(op, value)
        case 2: return .countEquals(choices.pick(FuzzValues.ints), negated: choices.byte() % 2 == 0)
        case 3: return .small(op, Int8(bitPattern: choices.byte()))
        case 4: return .big(op, choices.byte() < 128 ? choices.pick(FuzzValues.bigs) : choices.bits())
        case 5:
            let value =
                choices.byte() < 128 ? choices.pick(FuzzValues.doubles) : Double(bitPattern: choices.bits())
            return .ratio(op, value)
        case 6: return .ratioEquals(choices.pick(FuzzValues.doubles))
        case 7: return .price(op, choices.pick(FuzzValues.decimals))
        case 8: return .when(op, choices.pick(FuzzValues.dates))
        case 9: return .name(op, choices.text())
        case 10: return .nameEquals(choices.text(), negated: choices.byte() % 2 == 0)
        case 11: return .nameContains(choices.text())
        case 12: return .namePrefix(choices.text())
        case 13: return .nameEmpty
        case 14: return .nameLength(op, Int(choices.byte() % 5))
        case 15: return .identifier(choices.pick(FuzzValues.ids))
        case 16: return .link(choices.pick(FuzzValues.links))
        case 17: return .tagsContain(choices.text())
        case 18: return .tagsEmpty
        case 19:
            return .countIn((0..<Int(choices.byte() % 4)).map { _ in choices.pick(FuzzValues.ints) })
        case 20:
            let (a, b) = (choices.pick(FuzzValues.ints), choices.pick(FuzzValues.ints))
            return .countInRange(min(a, b), max(a, b), closed: choices.byte() % 2 == 0)
        case 21: return .sum(choices.pick(FuzzValues.operands), op, choices.pick(FuzzValues.ints))
        case 22: return .product(choices.pick(FuzzValues.operands), op, choices.pick(FuzzValues.ints))
        case 23: return .quotient(choices.pick(FuzzValues.operands), op, choices.pick(FuzzValues.ints))
        case 24: return .remainder(choices.pick(FuzzValues.operands), choices.pick(FuzzValues.ints))
        case 25: return .negated(op, choices.pick(FuzzValues.ints))
        case 26: return .partsAny(choices.text())
        case 27: return .partsAnyPrefix(choices.text())
        case 28: return .partsAll(op, choices.text())
        default: return .partsEmpty
        }
    }

    /// Whether the shape orders text against a value that Swift's own `<` cannot order with one of
    /// `names` (or, in `parts`, `labels`): a decomposed string against a longer precomposed one (`"e\u{301}"`
    /// against `"\u{E9}b"`), where neither is less than the other. There Swift's order is not total and
    /// SQLite's NFC order is documented to differ (`SwiftCollation.swift`).
    func ordersIncomparableText(names: [String], labels: [String]) -> Bool {
        func incomparable(_ value: String, _ stored: [String]) -> Bool {
            stored.contains { $0 != value && !($0 < value) && !(value < $0) }
        }
        switch self {
        case .name(_, let value): return incomparable(value, names)
        case .partsAll(_, let value): return incomparable(value, labels)
        case .and(let a, let b), .or(let a, let b):
            return a.ordersIncomparableText(names: names, labels: labels)
                || b.ordersIncomparableText(names: names, labels: labels)
        case .not(let a): return a.ordersIncomparableText(names: names, labels: labels)
        case .conditional(let test, let a, let b):
            return [test, a, b].contains { $0.ordersIncomparableText(names: names, labels: labels) }
        default: return false
        }
    }

    /// The predicate.
    var predicate: Predicate<FuzzItem> {
        let shape = self
        return Predicate<FuzzItem> { root in shape.build(root) }
    }

    /// The expression for a variable.
    func build(
        _ root: PredicateExpressions.Variable<FuzzItem>
    ) -> any StandardPredicateExpression<
        Bool
    > {
        typealias P = PredicateExpressions
        let count = P.build_KeyPath(root: root, keyPath: \.count)
        let name = P.build_KeyPath(root: root, keyPath: \.name)
        switch self {
        case .constant(let value): return P.build_Arg(value)
        case .count(let op, let value):
            return P.build_Comparison(lhs: count, rhs: P.build_Arg(value), op: op)
        case .countEquals(let value, let negated):
            return negated
                ? P.build_NotEqual(lhs: count, rhs: P.build_Arg(value))
                : P.build_Equal(lhs: count, rhs: P.build_Arg(value))
        case .small(let op, let value):
            return P.build_Comparison(
                lhs: P.build_KeyPath(root: root, keyPath: \.small), rhs: P.build_Arg(value), op: op)
        case .big(let op, let value):
            return P.build_Comparison(
                lhs: P.build_KeyPath(root: root, keyPath: \.big), rhs: P.build_Arg(value), op: op)
        case .ratio(let op, let value):
            return P.build_Comparison(
                lhs: P.build_KeyPath(root: root, keyPath: \.ratio), rhs: P.build_Arg(value), op: op)
        case .ratioEquals(let value):
            return P.build_Equal(
                lhs: P.build_KeyPath(root: root, keyPath: \.ratio), rhs: P.build_Arg(value))
        case .price(let op, let value):
            return P.build_Comparison(
                lhs: P.build_KeyPath(root: root, keyPath: \.price), rhs: P.build_Arg(value), op: op)
        case .when(let op, let value):
            return P.build_Comparison(
                lhs: P.build_KeyPath(root: root, keyPath: \.when), rhs: P.build_Arg(value), op: op)
        case .name(let op, let value):
            return P.build_Comparison(lhs: name, rhs: P.build_Arg(value), op: op)
        case .nameEquals(let value, let negated):
            return negated
                ? P.build_NotEqual(lhs: name, rhs: P.build_Arg(value))
                : P.build_Equal(lhs: name, rhs: P.build_Arg(value))
        case .nameContains(let value): return P.build_contains(name, P.build_Arg(value))
        case .namePrefix(let value): return P.build_starts(name, with: P.build_Arg(value))
        case .nameEmpty: return P.build_KeyPath(root: name, keyPath: \.isEmpty)
        case .nameLength(let op, let value):
            return P.build_Comparison(
                lhs: P.build_KeyPath(root: name, keyPath: \.count), rhs: P.build_Arg(value), op: op)
        case .identifier(let value):
            return P.build_Equal(lhs: P.build_KeyPath(root: root, keyPath: \.id), rhs: P.build_Arg(value))
        case .link(let value):
            return P.build_Equal(
                lhs: P.build_KeyPath(root: root, keyPath: \.link), rhs: P.build_Arg(value))
        case .tagsContain(let value):
            return P.build_contains(P.build_KeyPath(root: root, keyPath: \.tags), P.build_Arg(value))
        case .tagsEmpty:
            return P.build_KeyPath(root: P.build_KeyPath(root: root, keyPath: \.tags), keyPath: \.isEmpty)
        case .countIn(let values): return P.build_contains(P.build_Arg(values), count)
        case .countInRange(let low, let high, let closed):
            if closed {
                return P.build_contains(
                    P.build_ClosedRange(lower: P.build_Arg(low), upper: P.build_Arg(high)), count)
            }
            return P.build_contains(
                P.build_Range(lower: P.build_Arg(low), upper: P.build_Arg(high)), count)
        case .sum(let operand, let op, let value):
            let sum = P.build_Arithmetic(lhs: count, rhs: P.build_Arg(operand), op: .add)
            return P.build_Comparison(lhs: sum, rhs: P.build_Arg(value), op: op)
        case .product(let operand, let op, let value):
            let product = P.build_Arithmetic(lhs: count, rhs: P.build_Arg(operand), op: .multiply)
            return P.build_Comparison(lhs: product, rhs: P.build_Arg(value), op: op)
        case .quotient(let operand, let op, let value):
            let quotient = P.build_Division(lhs: count, rhs: P.build_Arg(operand))
            return P.build_Comparison(lhs: quotient, rhs: P.build_Arg(value), op: op)
        case .remainder(let operand, let value):
            return P.build_Equal(
                lhs: P.build_Remainder(lhs: count, rhs: P.build_Arg(operand)), rhs: P.build_Arg(value))
        case .negated(let op, let value):
            return P.build_Comparison(lhs: P.build_UnaryMinus(count), rhs: P.build_Arg(value), op: op)
        case .partsAny(let value):
            return P.build_contains(P.build_KeyPath(root: root, keyPath: \.parts)) { part in
                P.build_Equal(lhs: P.build_KeyPath(root: part, keyPath: \.label), rhs: P.build_Arg(value))
            }
        case .partsAnyPrefix(let value):
            return P.build_contains(P.build_KeyPath(root: root, keyPath: \.parts)) { part in
                P.build_starts(P.build_KeyPath(root: part, keyPath: \.label), with: P.build_Arg(value))
            }
        case .partsAll(let op, let value):
            return P.build_allSatisfy(P.build_KeyPath(root: root, keyPath: \.parts)) { part in
                P.build_Comparison(
                    lhs: P.build_KeyPath(root: part, keyPath: \.label), rhs: P.build_Arg(value), op: op)
            }
        case .partsEmpty:
            return P.build_KeyPath(
                root: P.build_KeyPath(root: root, keyPath: \.parts), keyPath: \.isEmpty)
        case .and(let a, let b): return Self.conjunction(a.build(root), b.build(root))
        case .or(let a, let b): return Self.disjunction(a.build(root), b.build(root))
        case .not(let a): return Self.negation(a.build(root))
        case .conditional(let test, let a, let b):
            return Self.conditional(test.build(root), a.build(root), b.build(root))
        }
    }

    private static func conjunction<
        A: StandardPredicateExpression<Bool>, B: StandardPredicateExpression<Bool>
    >(
        _ a: A, _ b: B
    ) -> any StandardPredicateExpression<Bool> {
        PredicateExpressions.build_Conjunction(lhs: a, rhs: b)
    }

    private static func disjunction<
        A: StandardPredicateExpression<Bool>, B: StandardPredicateExpression<Bool>
    >(
        _ a: A, _ b: B
    ) -> any StandardPredicateExpression<Bool> {
        PredicateExpressions.build_Disjunction(lhs: a, rhs: b)
    }

    private static func negation<A: StandardPredicateExpression<Bool>>(
        _ a: A
    )
        -> any StandardPredicateExpression<Bool>
    {
        PredicateExpressions.build_Negation(a)
    }

    private static func conditional<
        T: StandardPredicateExpression<Bool>, A: StandardPredicateExpression<Bool>,
        B: StandardPredicateExpression<Bool>
    >(_ test: T, _ a: A, _ b: B) -> any StandardPredicateExpression<Bool> {
        PredicateExpressions.build_Conditional(test, a, b)
    }

    var description: String {
        switch self {
        case .constant(let value): "\(value)"
        case .count(let op, let value): "count \(op) \(value)"
        case .countEquals(let value, let negated): "count \(negated ? "!=" : "==") \(value)"
        case .small(let op, let value): "small \(op) \(value)"
        case .big(let op, let value): "big \(op) \(value)"
        case .ratio(let op, let value): "ratio \(op) \(value)"
        case .ratioEquals(let value): "ratio == \(value)"
        case .price(let op, let value): "price \(op) \(value)"
        case .when(let op, let value): "when \(op) \(value.timeIntervalSinceReferenceDate)"
        case .name(let op, let value): "name \(op) \(value.debugDescription)"
        case .nameEquals(let value, let negated):
            "name \(negated ? "!=" : "==") \(value.debugDescription)"
        case .nameContains(let value): "name.contains(\(value.debugDescription))"
        case .namePrefix(let value): "name.starts(with: \(value.debugDescription))"
        case .nameEmpty: "name.isEmpty"
        case .nameLength(let op, let value): "name.count \(op) \(value)"
        case .identifier(let value): "id == \(value?.uuidString ?? "nil")"
        case .link(let value): "link == \(value?.absoluteString ?? "nil")"
        case .tagsContain(let value): "tags.contains(\(value.debugDescription))"
        case .tagsEmpty: "tags.isEmpty"
        case .countIn(let values): "\(values).contains(count)"
        case .countInRange(let low, let high, let closed):
            "(\(low)\(closed ? "..." : "..<")\(high)).contains(count)"
        case .sum(let operand, let op, let value): "count + \(operand) \(op) \(value)"
        case .product(let operand, let op, let value): "count * \(operand) \(op) \(value)"
        case .quotient(let operand, let op, let value): "count / \(operand) \(op) \(value)"
        case .remainder(let operand, let value): "count % \(operand) == \(value)"
        case .negated(let op, let value): "-count \(op) \(value)"
        case .partsAny(let value): "parts.contains { label == \(value.debugDescription) }"
        case .partsAnyPrefix(let value):
            "parts.contains { label.starts(with: \(value.debugDescription)) }"
        case .partsAll(let op, let value): "parts.allSatisfy { label \(op) \(value.debugDescription) }"
        case .partsEmpty: "parts.isEmpty"
        case .and(let a, let b): "(\(a) && \(b))"
        case .or(let a, let b): "(\(a) || \(b))"
        case .not(let a): "!(\(a))"
        case .conditional(let test, let a, let b): "(\(test) ? \(a) : \(b))"
        }
    }
}
