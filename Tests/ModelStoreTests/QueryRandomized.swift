import Foundation
import ModelStore
import ModelStoreTestSupport

/// Random data for the differential test: values drawn from small pools, so equalities, ties,
/// `nil`s and `NaN`s are frequent.
enum RandomData {
    static let ints = [-3, 0, 1, 2, 2, 5, 9, 100]
    static let doubles: [Double] = [-1, 0, -0.0, 0.5, 2, .nan, .infinity, 7.25]
    static let texts = ["", "a", "A", "ab", "Ab", "b", "ba", "\u{E9}", "e\u{301}", "zz", "Rome", "rome"]
    static let notes: [String?] = [nil, "", "a", "note", "Note"]
    static let scores: [Double?] = [nil, .nan, 0, 1.5, -2]
    static let decimals = ["0", "0.5", "0.50", "-1", "3"].map { Decimal(string: $0)! }
    static let dates = (0..<4).map { Date(timeIntervalSinceReferenceDate: 1_000 * Double($0)) }
    static let labels = ["red", "blue", "Red", "", "bright"]

    static func seed(_ seed: UInt64) -> @Sendable (ModelContext) throws -> Void {
        { context in
            var rng = SplitMix64(seed: seed)
            let stations = [
                Station("North", elevation: 900, region: "Alps"), Station("South", elevation: 10),
                Station("Port", elevation: 100, region: nil), Station("", elevation: -5, region: ""),
            ]
            for index in 0..<60 {
                let reading = Reading()
                reading.code = String(format: "X%02d", index)
                reading.flag = rng.chance(50)
                reading.int = rng.pick(ints)
                reading.double = rng.pick(doubles)
                reading.float = Float(rng.pick(doubles))
                reading.decimal = rng.pick(decimals)
                reading.text = rng.pick(texts)
                reading.date = rng.pick(dates)
                reading.note = rng.pick(notes)
                reading.score = rng.pick(scores)
                reading.count = rng.chance(30) ? nil : rng.pick(ints)
                reading.level = rng.pick(QueryLevel.allCases)
                reading.optionalLevel = rng.chance(30) ? nil : rng.pick(QueryLevel.allCases)
                reading.station = rng.chance(20) ? nil : rng.pick(stations)
                reading.tags = (0..<Int.random(in: 0...3, using: &rng)).map { _ in
                    Tag(rng.pick(labels), weight: Int.random(in: 0...4, using: &rng))
                }
                context.insert(reading)
            }
            try context.save()
        }
    }
}

/// The shape of a random predicate, drawn first and then built (builder closures cannot use the generator).
indirect enum RandomShape: Sendable, CustomStringConvertible {
    case flag
    case int(PredicateExpressions.ComparisonOperator, Int)
    case intEquals(Int, negated: Bool)
    case double(PredicateExpressions.ComparisonOperator, Double)
    case float(PredicateExpressions.ComparisonOperator, Float)
    case decimal(PredicateExpressions.ComparisonOperator, Decimal)
    case date(PredicateExpressions.ComparisonOperator, Date)
    case text(PredicateExpressions.ComparisonOperator, String)
    case textEquals(String)
    case textContains(String)
    case textPrefix(String)
    case textCount(Int)
    case note(String?)
    case noteCoalesced(String, PredicateExpressions.ComparisonOperator, String)
    case scoreCoalesced(Double, PredicateExpressions.ComparisonOperator, Double)
    case count(Int?)
    case level(QueryLevel)
    case optionalLevel(QueryLevel?)
    case intIn([Int])
    case textIn([String])
    case intRange(Int, Int, closed: Bool)
    case stationName(String)
    case stationElevation(PredicateExpressions.ComparisonOperator, Int)
    case stationMissing
    case tagsAny(PredicateExpressions.ComparisonOperator, Int)
    case tagsAll(String)
    case tagsEmpty
    case and(RandomShape, RandomShape)
    case or(RandomShape, RandomShape)
    case not(RandomShape)

    static let operators: [PredicateExpressions.ComparisonOperator] = [
        .lessThan, .lessThanOrEqual, .greaterThan, .greaterThanOrEqual,
    ]

    static func random(_ rng: inout SplitMix64, depth: Int = 0) -> RandomShape {
        if depth < 3 && rng.chance(45) {
            switch Int.random(in: 0..<5, using: &rng) {
            case 0, 1: return .and(random(&rng, depth: depth + 1), random(&rng, depth: depth + 1))
            case 2, 3: return .or(random(&rng, depth: depth + 1), random(&rng, depth: depth + 1))
            default: return .not(random(&rng, depth: depth + 1))
            }
        }
        let op = rng.pick(operators)
        switch Int.random(in: 0..<27, using: &rng) {
        case 0: return .flag
        case 1: return .int(op, rng.pick(RandomData.ints))
        case 2: return .intEquals(rng.pick(RandomData.ints), negated: rng.chance(50))
        case 3: return .double(op, rng.pick(RandomData.doubles))
        case 4: return .float(op, Float(rng.pick(RandomData.doubles)))
        case 5: return .decimal(op, rng.pick(RandomData.decimals))
        case 6: return .date(op, rng.pick(RandomData.dates))
        case 7: return .text(op, rng.pick(RandomData.texts))
        case 8: return .textEquals(rng.pick(RandomData.texts))
        case 9: return .textContains(rng.pick(["", "a", "A", "e", "om", "\u{301}"]))
        case 10: return .textPrefix(rng.pick(["", "a", "R", "e"]))
        case 11: return .textCount(Int.random(in: 0...2, using: &rng))
        case 12: return .note(rng.pick(RandomData.notes))
        case 13: return .noteCoalesced(rng.pick(["", "m"]), op, rng.pick(["a", "n", ""]))
        case 14: return .scoreCoalesced(rng.pick([0, -1, .nan]), op, rng.pick([0, 1, -1]))
        case 15: return .count(rng.chance(30) ? nil : rng.pick(RandomData.ints))
        case 16: return .level(rng.pick(QueryLevel.allCases))
        case 17: return .optionalLevel(rng.chance(30) ? nil : rng.pick(QueryLevel.allCases))
        case 18: return .intIn((0..<Int.random(in: 0...3, using: &rng)).map { _ in rng.pick(RandomData.ints) })
        case 19: return .textIn((0..<Int.random(in: 1...3, using: &rng)).map { _ in rng.pick(RandomData.texts) })
        case 20:
            let a = rng.pick(RandomData.ints)
            let b = rng.pick(RandomData.ints)
            return .intRange(min(a, b), max(a, b), closed: rng.chance(50))
        case 21: return .stationName(rng.pick(["North", "Port", ""]))
        case 22: return .stationElevation(op, rng.pick([0, 10, 100, 500]))
        case 23: return .stationMissing
        case 24: return .tagsAny(op, Int.random(in: 0...4, using: &rng))
        case 25: return .tagsAll(rng.pick(["b", "r", ""]))
        default: return .tagsEmpty
        }
    }

    /// The expression for a variable.
    func build(_ root: PredicateExpressions.Variable<Reading>) -> any StandardPredicateExpression<Bool> {
        typealias P = PredicateExpressions
        switch self {
        case .flag: return P.build_KeyPath(root: root, keyPath: \.flag)
        case .int(let op, let value):
            return P.build_Comparison(lhs: P.build_KeyPath(root: root, keyPath: \.int), rhs: P.build_Arg(value), op: op)
        case .intEquals(let value, let negated):
            let key = P.build_KeyPath(root: root, keyPath: \.int)
            return negated
                ? P.build_NotEqual(lhs: key, rhs: P.build_Arg(value)) : P.build_Equal(lhs: key, rhs: P.build_Arg(value))
        case .double(let op, let value):
            return P.build_Comparison(
                lhs: P.build_KeyPath(root: root, keyPath: \.double), rhs: P.build_Arg(value), op: op)
        case .float(let op, let value):
            return P.build_Comparison(
                lhs: P.build_KeyPath(root: root, keyPath: \.float), rhs: P.build_Arg(value), op: op)
        case .decimal(let op, let value):
            return P.build_Comparison(
                lhs: P.build_KeyPath(root: root, keyPath: \.decimal), rhs: P.build_Arg(value), op: op)
        case .date(let op, let value):
            return P.build_Comparison(
                lhs: P.build_KeyPath(root: root, keyPath: \.date), rhs: P.build_Arg(value), op: op)
        case .text(let op, let value):
            return P.build_Comparison(
                lhs: P.build_KeyPath(root: root, keyPath: \.text), rhs: P.build_Arg(value), op: op)
        case .textEquals(let value):
            return P.build_Equal(lhs: P.build_KeyPath(root: root, keyPath: \.text), rhs: P.build_Arg(value))
        case .textContains(let value):
            return P.build_contains(P.build_KeyPath(root: root, keyPath: \.text), P.build_Arg(value))
        case .textPrefix(let value):
            return P.build_starts(P.build_KeyPath(root: root, keyPath: \.text), with: P.build_Arg(value))
        case .textCount(let value):
            return P.build_Comparison(
                lhs: P.build_KeyPath(root: P.build_KeyPath(root: root, keyPath: \.text), keyPath: \.count),
                rhs: P.build_Arg(value),
                op: .greaterThan)
        case .note(let value):
            return P.build_Equal(lhs: P.build_KeyPath(root: root, keyPath: \.note), rhs: P.build_Arg(value))
        case .noteCoalesced(let fallback, let op, let value):
            return P.build_Comparison(
                lhs: P.build_NilCoalesce(lhs: P.build_KeyPath(root: root, keyPath: \.note), rhs: P.build_Arg(fallback)),
                rhs: P.build_Arg(value), op: op)
        case .scoreCoalesced(let fallback, let op, let value):
            return P.build_Comparison(
                lhs: P.build_NilCoalesce(
                    lhs: P.build_KeyPath(root: root, keyPath: \.score), rhs: P.build_Arg(fallback)),
                rhs: P.build_Arg(value), op: op)
        case .count(let value):
            return P.build_Equal(lhs: P.build_KeyPath(root: root, keyPath: \.count), rhs: P.build_Arg(value))
        case .level(let value):
            return P.build_Equal(lhs: P.build_KeyPath(root: root, keyPath: \.level), rhs: P.build_Arg(value))
        case .optionalLevel(let value):
            return P.build_Equal(lhs: P.build_KeyPath(root: root, keyPath: \.optionalLevel), rhs: P.build_Arg(value))
        case .intIn(let values):
            return P.build_contains(P.build_Arg(values), P.build_KeyPath(root: root, keyPath: \.int))
        case .textIn(let values):
            return P.build_contains(P.build_Arg(values), P.build_KeyPath(root: root, keyPath: \.text))
        case .intRange(let low, let high, let closed):
            let key = P.build_KeyPath(root: root, keyPath: \.int)
            if closed {
                return P.build_contains(P.build_ClosedRange(lower: P.build_Arg(low), upper: P.build_Arg(high)), key)
            }
            return P.build_contains(P.build_Range(lower: P.build_Arg(low), upper: P.build_Arg(high)), key)
        case .stationName(let name):
            let city = P.build_flatMap(P.build_KeyPath(root: root, keyPath: \.station)) { station in
                P.build_KeyPath(root: station, keyPath: \.name)
            }
            return P.build_Equal(lhs: city, rhs: P.build_Arg(Optional(name)))
        case .stationElevation(let op, let value):
            let test = P.build_flatMap(P.build_KeyPath(root: root, keyPath: \.station)) { station in
                P.build_Comparison(
                    lhs: P.build_KeyPath(root: station, keyPath: \.elevation), rhs: P.build_Arg(value), op: op)
            }
            return P.build_NilCoalesce(lhs: test, rhs: P.build_Arg(false))
        case .stationMissing:
            return P.build_Equal(lhs: P.build_KeyPath(root: root, keyPath: \.station), rhs: P.build_NilLiteral())
        case .tagsAny(let op, let value):
            return P.build_contains(P.build_KeyPath(root: root, keyPath: \.tags)) { tag in
                P.build_Comparison(lhs: P.build_KeyPath(root: tag, keyPath: \.weight), rhs: P.build_Arg(value), op: op)
            }
        case .tagsAll(let prefix):
            return P.build_allSatisfy(P.build_KeyPath(root: root, keyPath: \.tags)) { tag in
                P.build_starts(P.build_KeyPath(root: tag, keyPath: \.label), with: P.build_Arg(prefix))
            }
        case .tagsEmpty:
            return P.build_KeyPath(root: P.build_KeyPath(root: root, keyPath: \.tags), keyPath: \.isEmpty)
        case .and(let a, let b): return Self.conjunction(a.build(root), b.build(root))
        case .or(let a, let b): return Self.disjunction(a.build(root), b.build(root))
        case .not(let a): return Self.negation(a.build(root))
        }
    }

    private static func conjunction<A: StandardPredicateExpression<Bool>, B: StandardPredicateExpression<Bool>>(
        _ a: A, _ b: B
    ) -> any StandardPredicateExpression<Bool> {
        PredicateExpressions.build_Conjunction(lhs: a, rhs: b)
    }

    private static func disjunction<A: StandardPredicateExpression<Bool>, B: StandardPredicateExpression<Bool>>(
        _ a: A, _ b: B
    ) -> any StandardPredicateExpression<Bool> {
        PredicateExpressions.build_Disjunction(lhs: a, rhs: b)
    }

    private static func negation<A: StandardPredicateExpression<Bool>>(_ a: A) -> any StandardPredicateExpression<Bool>
    {
        PredicateExpressions.build_Negation(a)
    }

    var predicate: Predicate<Reading> {
        let shape = self
        return Predicate<Reading> { root in shape.build(root) }
    }

    var description: String {
        switch self {
        case .flag: "flag"
        case .int(let op, let v): "int \(op) \(v)"
        case .intEquals(let v, let negated): "int \(negated ? "!=" : "==") \(v)"
        case .double(let op, let v): "double \(op) \(v)"
        case .float(let op, let v): "float \(op) \(v)"
        case .decimal(let op, let v): "decimal \(op) \(v)"
        case .date(let op, let v): "date \(op) \(v.timeIntervalSinceReferenceDate)"
        case .text(let op, let v): "text \(op) \(v.debugDescription)"
        case .textEquals(let v): "text == \(v.debugDescription)"
        case .textContains(let v): "text.contains(\(v.debugDescription))"
        case .textPrefix(let v): "text.starts(with: \(v.debugDescription))"
        case .textCount(let v): "text.count > \(v)"
        case .note(let v): "note == \(String(describing: v))"
        case .noteCoalesced(let d, let op, let v): "(note ?? \(d.debugDescription)) \(op) \(v.debugDescription)"
        case .scoreCoalesced(let d, let op, let v): "(score ?? \(d)) \(op) \(v)"
        case .count(let v): "count == \(String(describing: v))"
        case .level(let v): "level == \(v)"
        case .optionalLevel(let v): "optionalLevel == \(String(describing: v))"
        case .intIn(let v): "\(v).contains(int)"
        case .textIn(let v): "\(v).contains(text)"
        case .intRange(let a, let b, let closed): "(\(a)\(closed ? "..." : "..<")\(b)).contains(int)"
        case .stationName(let v): "station?.name == \(v.debugDescription)"
        case .stationElevation(let op, let v): "station.flatMap { elevation \(op) \(v) } ?? false"
        case .stationMissing: "station == nil"
        case .tagsAny(let op, let v): "tags.contains { weight \(op) \(v) }"
        case .tagsAll(let v): "tags.allSatisfy { label.starts(with: \(v.debugDescription)) }"
        case .tagsEmpty: "tags.isEmpty"
        case .and(let a, let b): "(\(a) && \(b))"
        case .or(let a, let b): "(\(a) || \(b))"
        case .not(let a): "!(\(a))"
        }
    }
}

/// Random sorts over the sortable attributes, with random windows.
enum RandomSort {
    static func descriptor(_ rng: inout SplitMix64, predicate: Predicate<Reading>) -> (FetchDescriptor<Reading>, String)
    {
        let keys: [(String, SortDescriptor<Reading>)] = [
            ("int", SortDescriptor(\.int)), ("int desc", SortDescriptor(\.int, order: .reverse)),
            ("double", SortDescriptor(\.double)), ("text", SortDescriptor(\.text)),
            ("text desc", SortDescriptor(\.text, order: .reverse)), ("note", SortDescriptor(\.note)),
            ("score desc", SortDescriptor(\.score, order: .reverse)), ("decimal", SortDescriptor(\.decimal)),
            ("date", SortDescriptor(\.date)), ("float", SortDescriptor(\.float)),
        ]
        var descriptor = FetchDescriptor(predicate: predicate)
        var label = ""
        for _ in 0..<Int.random(in: 0...2, using: &rng) {
            let (name, key) = rng.pick(keys)
            descriptor.sortBy.append(key)
            label += " sorted by \(name)"
        }
        if rng.chance(40) {
            descriptor.fetchOffset = rng.chance(50) ? nil : Int.random(in: 0...10, using: &rng)
            descriptor.fetchLimit = Int.random(in: 0...12, using: &rng)
            label += " offset \(descriptor.fetchOffset ?? 0) limit \(descriptor.fetchLimit!)"
        }
        return (descriptor, label)
    }
}
