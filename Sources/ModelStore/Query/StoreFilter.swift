import Foundation

/// A store-neutral condition over stored property names: what the context pushes to a
/// ``DataStoreQuerying`` store, and what `SnapshotEvaluator` runs on snapshots.
///
/// The context translates a `#Predicate` into this form (see ``FetchDescriptor``); an adapter
/// reads it to run as much of a fetch as it can natively, and declares what it runs in
/// ``QueryCapabilities``. Every filter means exactly what the Swift predicate it came from means:
///
/// - A path reads a stored value; a path through a to-one relationship that is `nil` (or refers
///   to a model the store does not have) reads ``StoreValue/null``.
/// - `==` and `!=` treat ``StoreValue/null`` as a value: `null == null` is true, as `nil == nil`
///   is in Swift. Numbers compare as the Swift type they came from, so `NaN == NaN` is false.
/// - `<`, `<=`, `>`, `>=`, ``range(_:_:)`` and the text operations are false when the stored value
///   is ``StoreValue/null``; strings compare as Swift's `<` on `String`.
/// - ``any(_:_:)`` and ``all(_:_:)`` look at the related models of a to-many relationship that
///   the store has: `all` of none is true, `any` of none is false.
///
/// A filter never fails to evaluate: the context keeps anything that could (force unwraps, casts)
/// out of it and evaluates that on models instead.
///
/// Room to grow: a later version may add a case here or to ``StoreTextOperation`` (for a new kind of
/// condition, such as a test of a model's class), always with a new ``Kinds`` bit. The context sends
/// a store only the kinds its ``QueryCapabilities/filters`` name, so an adapter that switches over
/// these enums keeps building and keeps its results right when it:
/// 1. ends each such switch with `@unknown default` (it compiles without a warning today, and turns a
///    new case into a warning instead of a build failure), handling it as "not run here";
/// 2. declares the kinds it runs by name (`[.equality, .ordering, …]`) rather than ``Kinds/all``,
///    which grows with each version.
public indirect enum StoreFilter: Sendable, Hashable {
    /// Matches everything (`true`) or nothing (`false`).
    case constant(Bool)
    /// Matches the models with these identifiers.
    case identifiers(Set<PersistentIdentifier>)
    /// Compares the value at a path with a value.
    case compare(StorePath, StoreComparisonOperator, StoreValue)
    /// Matches models whose value at the path equals one of the values (`values.contains($0.path)`).
    case isIn(StorePath, [StoreValue])
    /// Matches models whose value at the path lies in a range (`(a...b).contains($0.path)`).
    case range(StorePath, StoreRange)
    /// Matches models whose string at the path passes a text test (`contains`, `starts(with:)`, a regex).
    case text(StorePath, StoreTextOperation)
    /// Matches models whose array attribute at the path has an element equal to the value
    /// (`$0.tags.contains("x")`); a `nil` array matches nothing.
    case arrayContains(StorePath, StoreValue)
    /// Matches models with at least one related model (of the to-many relationship at the path)
    /// that matches the inner filter, whose paths start at the related entity.
    case any(StorePath, StoreFilter)
    /// Matches models whose related models (of the to-many relationship at the path) all match
    /// the inner filter, whose paths start at the related entity.
    case all(StorePath, StoreFilter)
    /// Matches models that every operand matches.
    case and([StoreFilter])
    /// Matches models that any operand matches.
    case or([StoreFilter])
    /// Matches models the operand does not match.
    case not(StoreFilter)

    /// Matches models whose property equals a value: `.compare([name], .equal, value)`.
    public static func equal(_ property: String, _ value: StoreValue) -> StoreFilter {
        .compare(StorePath(property), .equal, value)
    }

    /// The filter's negation, simplified where that changes no result: `!true` is `false`, `!!a` is
    /// `a`, and `!(a == b)` is `a != b` (ordering comparisons stay negated: `!(a < b)` is not
    /// `a >= b` when `a` is `NaN` or `nil`).
    public var negated: StoreFilter {
        switch self {
        case .constant(let value): .constant(!value)
        case .not(let item): item
        case .compare(let path, .equal, let value): .compare(path, .notEqual, value)
        case .compare(let path, .notEqual, let value): .compare(path, .equal, value)
        default: .not(self)
        }
    }

    /// The operands of a top-level conjunction (nested `and`s flattened), or the filter itself.
    public var conjuncts: [StoreFilter] {
        if case .and(let items) = self { return items.flatMap(\.conjuncts) }
        return [self]
    }

    /// The conjunction of filters, simplified: `nil` for none, the filter itself for one.
    public static func conjunction(_ filters: [StoreFilter]) -> StoreFilter? {
        let flat = filters.flatMap(\.conjuncts).filter { $0 != .constant(true) }
        if flat.contains(.constant(false)) { return .constant(false) }
        switch flat.count {
        case 0: return nil
        case 1: return flat[0]
        default: return .and(flat)
        }
    }

    /// The kinds of condition the filter uses: what a store must support to run it.
    public var kinds: Kinds {
        switch self {
        case .constant: return []
        case .identifiers: return .identifiers
        case .compare(let path, let op, _):
            return path.kinds.union(op == .equal || op == .notEqual ? .equality : .ordering)
        case .isIn(let path, _): return path.kinds.union(.membership)
        case .range(let path, _): return path.kinds.union(.range)
        case .text(let path, let operation):
            switch operation {
            case .contains: return path.kinds.union(.textContains)
            case .hasPrefix: return path.kinds.union(.textPrefix)
            case .matchesRegex: return path.kinds.union(.regex)
            }
        case .arrayContains(let path, _): return path.kinds.union(.arrayContains)
        case .any(let path, let inner), .all(let path, let inner):
            return path.kinds.union(.quantifiers).union(inner.kinds)
        case .and(let items): return items.reduce(into: []) { $0.formUnion($1.kinds) }
        case .or(let items): return items.reduce(into: Kinds.disjunction) { $0.formUnion($1.kinds) }
        case .not(let item): return item.kinds.union(.negation)
        }
    }

    /// Whether the filter reads through relationships (a path of more than one property, or a quantifier).
    public var traversesRelationships: Bool { kinds.contains(.toOneTraversal) || kinds.contains(.quantifiers) }

    /// The kinds of condition a ``StoreFilter`` can use, as a store declares it supports them.
    public struct Kinds: OptionSet, Sendable, Hashable, CustomStringConvertible {
        /// The option bits.
        public let rawValue: UInt32
        /// Kinds from bits.
        public init(rawValue: UInt32) { self.rawValue = rawValue }

        /// ``StoreFilter/identifiers(_:)``.
        public static let identifiers = Kinds(rawValue: 1 << 0)
        /// `==` and `!=`: ``StoreFilter/compare(_:_:_:)`` with ``StoreComparisonOperator/equal`` or
        /// ``StoreComparisonOperator/notEqual``.
        public static let equality = Kinds(rawValue: 1 << 1)
        /// `<`, `<=`, `>`, `>=`.
        public static let ordering = Kinds(rawValue: 1 << 2)
        /// ``StoreFilter/isIn(_:_:)``.
        public static let membership = Kinds(rawValue: 1 << 3)
        /// ``StoreFilter/range(_:_:)``.
        public static let range = Kinds(rawValue: 1 << 4)
        /// ``StoreTextOperation/contains(_:)``.
        public static let textContains = Kinds(rawValue: 1 << 5)
        /// ``StoreTextOperation/hasPrefix(_:)``.
        public static let textPrefix = Kinds(rawValue: 1 << 6)
        /// ``StoreTextOperation/matchesRegex(_:)``.
        public static let regex = Kinds(rawValue: 1 << 7)
        /// ``StoreFilter/not(_:)``.
        public static let negation = Kinds(rawValue: 1 << 8)
        /// ``StoreFilter/or(_:)``.
        public static let disjunction = Kinds(rawValue: 1 << 9)
        /// Paths through to-one relationships (`destination.city`).
        public static let toOneTraversal = Kinds(rawValue: 1 << 10)
        /// ``StoreFilter/any(_:_:)`` and ``StoreFilter/all(_:_:)`` over to-many relationships.
        public static let quantifiers = Kinds(rawValue: 1 << 11)
        /// ``StoreFilter/arrayContains(_:_:)``.
        public static let arrayContains = Kinds(rawValue: 1 << 12)

        /// Every kind of the ModelStore version the adapter is built against; a later version adds its
        /// new kinds here. Declare it only if the adapter handles every case of ``StoreFilter`` (the
        /// built-in stores do); see the type's note on room to grow.
        public static let all: Kinds = [
            .identifiers, .equality, .ordering, .membership, .range, .textContains, .textPrefix, .regex, .negation,
            .disjunction, .toOneTraversal, .quantifiers, .arrayContains,
        ]

        /// The kinds' names, for explanations.
        public var description: String {
            let names: [(Kinds, String)] = [
                (.identifiers, "identifiers"), (.equality, "equality"), (.ordering, "ordering"),
                (.membership, "membership"), (.range, "range"), (.textContains, "textContains"),
                (.textPrefix, "textPrefix"), (.regex, "regex"), (.negation, "negation"),
                (.disjunction, "disjunction"), (.toOneTraversal, "toOneTraversal"), (.quantifiers, "quantifiers"),
                (.arrayContains, "arrayContains"),
            ]
            return "[" + names.filter { contains($0.0) }.map(\.1).joined(separator: ", ") + "]"
        }
    }
}

/// A path from an entity to a stored property: the property's name, after the names of the to-one
/// relationships that lead to it (`["destination", "city"]`).
///
/// In ``StoreFilter/any(_:_:)`` and ``StoreFilter/all(_:_:)`` the last component names the
/// to-many relationship.
public struct StorePath: Sendable, Hashable, CustomStringConvertible, ExpressibleByStringLiteral {
    /// The property names, outermost first.
    public var components: [String]

    /// A path of property names.
    public init(_ components: [String]) {
        precondition(!components.isEmpty, "a store path names at least one property")
        self.components = components
    }

    /// The path of a single property of the entity itself.
    public init(_ property: String) { self.components = [property] }

    /// A path written with dots: `"destination.city"`.
    public init(stringLiteral value: String) {
        self.init(value.split(separator: ".").map(String.init))
    }

    /// The name of the property the path ends at.
    public var property: String { components[components.count - 1] }

    /// Whether the path names a property of the entity itself.
    public var isDirect: Bool { components.count == 1 }

    /// The path with a property appended.
    public func appending(_ name: String) -> StorePath { StorePath(components + [name]) }

    /// `destination.city`.
    public var description: String { components.joined(separator: ".") }

    var kinds: StoreFilter.Kinds { isDirect ? [] : .toOneTraversal }
}

/// How ``StoreFilter/compare(_:_:_:)`` compares a stored value with its operand.
public enum StoreComparisonOperator: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// `==`.
    case equal = "=="
    /// `!=`.
    case notEqual = "!="
    /// `<`.
    case less = "<"
    /// `<=`.
    case lessOrEqual = "<="
    /// `>`.
    case greater = ">"
    /// `>=`.
    case greaterOrEqual = ">="

    /// The operator as Swift spells it.
    public var description: String { rawValue }

    /// The operator with its operands swapped: `a < b` is `b > a`.
    public var swapped: StoreComparisonOperator {
        switch self {
        case .equal, .notEqual: self
        case .less: .greater
        case .lessOrEqual: .greaterOrEqual
        case .greater: .less
        case .greaterOrEqual: .lessOrEqual
        }
    }
}

/// The bounds of ``StoreFilter/range(_:_:)``: the lower bound (if any) is inclusive, the upper one
/// inclusive or not, as in Swift's `a...b`, `a..<b`, `a...`, `...b` and `..<b`.
public struct StoreRange: Sendable, Hashable, CustomStringConvertible {
    /// The least value in the range, if bounded below.
    public var lower: StoreValue?
    /// The upper bound, if bounded above.
    public var upper: StoreValue?
    /// Whether the upper bound is in the range (`...`) or not (`..<`).
    public var includesUpper: Bool

    /// A range.
    public init(lower: StoreValue?, upper: StoreValue?, includesUpper: Bool) {
        self.lower = lower
        self.upper = upper
        self.includesUpper = includesUpper
    }

    /// The range as Swift spells it: `1...5`, `1..<5`, `1...`, `...5`.
    public var description: String {
        let low = lower.map(\.description) ?? ""
        let high = upper.map(\.description) ?? ""
        if upper == nil { return "\(low)..." }
        return low + (includesUpper ? "..." : "..<") + high
    }
}

/// A test on a stored string, with Swift's semantics on `String`.
public enum StoreTextOperation: Sendable, Hashable, CustomStringConvertible {
    /// The string contains the text, compared character by character (an empty text is contained
    /// in every string), as `Collection.contains(_:)` in a `#Predicate`.
    case contains(String)
    /// The string starts with the text, compared character by character, as `starts(with:)`.
    case hasPrefix(String)
    /// The string contains a match of the regular expression (Swift `Regex` syntax), as
    /// `contains(/pattern/)` in a `#Predicate`. Write `(?i)` in the pattern for a case-insensitive test.
    case matchesRegex(String)

    /// `contains("text")`, `starts(with: "text")`, `contains(/pattern/)`.
    public var description: String {
        switch self {
        case .contains(let text): "contains(\(StoreValue.string(text)))"
        case .hasPrefix(let text): "starts(with: \(StoreValue.string(text)))"
        case .matchesRegex(let pattern): "contains(/\(pattern)/)"
        }
    }
}

extension StoreFilter: CustomStringConvertible {
    /// The filter in a Swift-like notation: `(budget > 100 && destination.city == "Rome")`.
    public var description: String {
        switch self {
        case .constant(let value): return String(value)
        case .identifiers(let ids):
            return "persistentModelID in [" + ids.sorted().map(\.description).joined(separator: ", ") + "]"
        case .compare(let path, let op, let value): return "\(path) \(op) \(value)"
        case .isIn(let path, let values):
            return "\(path) in [" + values.map(\.description).joined(separator: ", ") + "]"
        case .range(let path, let range): return "\(path) in \(range)"
        case .text(let path, let operation): return "\(path).\(operation)"
        case .arrayContains(let path, let value): return "\(path).contains(\(value))"
        case .any(let path, let inner): return "\(path).contains { \(inner) }"
        case .all(let path, let inner): return "\(path).allSatisfy { \(inner) }"
        case .and(let items): return "(" + items.map(\.description).joined(separator: " && ") + ")"
        case .or(let items): return "(" + items.map(\.description).joined(separator: " || ") + ")"
        case .not(let item): return "!(\(item))"
        }
    }
}
