import Foundation
import ModelStore

/// Predicates over one attribute and one value, built for any attribute type, as `#Predicate` would
/// build them: the value corpus runs every operator an attribute's type accepts against every value.
enum ValueProbe {
    typealias Probe = (name: String, predicate: Predicate<Specimen>)

    /// `==` and `!=` against every distinct value, membership in a list of some, and `<`, `<=`, `>` and
    /// `>=` against the first `pivots` distinct values (each list starts with its extremes and its traps,
    /// and sorts order every value), so a store that answers each query with a round trip stays fast.
    static func ordered<Value: Comparable & Codable & Sendable>(
        _ keyPath: any KeyPath<Specimen, Value> & Sendable, _ name: String, _ values: [Value], pivots: Int = 6
    ) -> [Probe] {
        var probes = equatable(keyPath, name, values)
        for value in distinct(values).prefix(pivots) {
            let shown = String(reflecting: value)
            probes += [
                ("\(name) < \(shown)", compare(keyPath, .lessThan, value)),
                ("\(name) <= \(shown)", compare(keyPath, .lessThanOrEqual, value)),
                ("\(name) > \(shown)", compare(keyPath, .greaterThan, value)),
                ("\(name) >= \(shown)", compare(keyPath, .greaterThanOrEqual, value)),
            ]
        }
        return probes
    }

    /// `==` and `!=` against every distinct value, and membership in the first half of the values.
    static func equatable<Value: Equatable & Codable & Sendable>(
        _ keyPath: any KeyPath<Specimen, Value> & Sendable, _ name: String, _ values: [Value]
    ) -> [Probe] {
        var probes: [Probe] = []
        for value in distinct(values) {
            let shown = String(reflecting: value)
            probes.append(("\(name) == \(shown)", equal(keyPath, value)))
            probes.append(("\(name) != \(shown)", notEqual(keyPath, value)))
        }
        let list = Array(values.prefix(max(1, values.count / 2)))
        probes.append(("\(String(reflecting: list)).contains(\(name))", member(keyPath, of: list)))
        return probes
    }

    /// Each value once, in first-seen order (NaN kept once: it never equals itself).
    static func distinct<Value: Equatable>(_ values: [Value]) -> [Value] {
        var kept: [Value] = []
        for value in values where !kept.contains(where: { $0 == value || ($0 != $0 && value != value) }) {
            kept.append(value)
        }
        return kept
    }

    static func equal<Value: Equatable & Codable & Sendable>(
        _ keyPath: any KeyPath<Specimen, Value> & Sendable, _ value: Value
    ) -> Predicate<Specimen> {
        Predicate<Specimen> { specimen in
            PredicateExpressions.build_Equal(
                lhs: PredicateExpressions.build_KeyPath(root: specimen, keyPath: keyPath),
                rhs: PredicateExpressions.build_Arg(value))
        }
    }

    static func notEqual<Value: Equatable & Codable & Sendable>(
        _ keyPath: any KeyPath<Specimen, Value> & Sendable, _ value: Value
    ) -> Predicate<Specimen> {
        Predicate<Specimen> { specimen in
            PredicateExpressions.build_NotEqual(
                lhs: PredicateExpressions.build_KeyPath(root: specimen, keyPath: keyPath),
                rhs: PredicateExpressions.build_Arg(value))
        }
    }

    static func compare<Value: Comparable & Codable & Sendable>(
        _ keyPath: any KeyPath<Specimen, Value> & Sendable, _ operation: PredicateExpressions.ComparisonOperator,
        _ value: Value
    ) -> Predicate<Specimen> {
        Predicate<Specimen> { specimen in
            PredicateExpressions.build_Comparison(
                lhs: PredicateExpressions.build_KeyPath(root: specimen, keyPath: keyPath),
                rhs: PredicateExpressions.build_Arg(value), op: operation)
        }
    }

    static func member<Value: Equatable & Codable & Sendable>(
        _ keyPath: any KeyPath<Specimen, Value> & Sendable, of list: [Value]
    ) -> Predicate<Specimen> {
        Predicate<Specimen> { specimen in
            PredicateExpressions.build_contains(
                PredicateExpressions.build_Arg(list),
                PredicateExpressions.build_KeyPath(root: specimen, keyPath: keyPath))
        }
    }

    /// `value == value`: false exactly for NaN, so a sort can leave out what Swift does not order.
    static func selfEqual<Value: Equatable & Codable & Sendable>(
        _ keyPath: any KeyPath<Specimen, Value> & Sendable
    ) -> Predicate<Specimen> {
        Predicate<Specimen> { specimen in
            PredicateExpressions.build_Equal(
                lhs: PredicateExpressions.build_KeyPath(root: specimen, keyPath: keyPath),
                rhs: PredicateExpressions.build_KeyPath(root: specimen, keyPath: keyPath))
        }
    }

    /// `contains`, `starts(with:)` and `hasSuffix` of a string attribute, for every probe.
    static func text(_ probes: [String]) -> [Probe] {
        probes.flatMap { probe -> [Probe] in
            let shown = String(reflecting: probe)
            return [
                ("title.contains(\(shown))", #Predicate<Specimen> { $0.title.contains(probe) }),
                ("title.starts(with: \(shown))", #Predicate<Specimen> { $0.title.starts(with: probe) }),
            ]
        }
    }
}
