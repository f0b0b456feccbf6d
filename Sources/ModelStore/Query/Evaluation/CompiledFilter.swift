import Foundation

/// Compiles a ``StoreFilter`` into closures over snapshots, with every slot resolved up front.
package struct CompiledFilter {
    package typealias Predicate = @Sendable (DefaultSnapshot) -> Bool
    typealias Getter = @Sendable (DefaultSnapshot) -> StoreValue
    package typealias Resolver = @Sendable (PersistentIdentifier) -> DefaultSnapshot?
    package typealias ValueTest = @Sendable (StoreValue) -> Bool

    let schema: Schema?
    let resolve: Resolver?

    /// A compiler for filters over entities of `schema`, reading related snapshots through `resolve`.
    package init(schema: Schema?, resolve: Resolver?) {
        self.schema = schema
        self.resolve = resolve
    }

    /// The filter as a closure over snapshots of `entity`, every slot resolved.
    package func compile(_ filter: StoreFilter, entity: Schema.Entity) throws -> Predicate {
        switch filter {
        case .constant(let value):
            return { _ in value }
        case .identifiers(let ids):
            return { ids.contains($0.persistentIdentifier) }
        case .compare(let path, let op, let value):
            return try compare(path, op, value, entity: entity)
        case .isIn(let path, let values):
            return try membership(path, values, entity: entity)
        case .range(let path, let range):
            let get = try getter(path, entity: entity, expecting: .attribute)
            return { snapshot in Self.contains(range, get(snapshot)) }
        case .text(let path, let operation):
            return try text(path, operation, entity: entity)
        case .arrayContains(let path, let element):
            let get = try getter(path, entity: entity, expecting: .attribute)
            let test = Self.elementTest(element)
            return { test(get($0)) }
        case .any(let path, let inner), .all(let path, let inner):
            return try quantifier(filter, path: path, inner: inner, entity: entity)
        case .and(let items):
            let predicates = try items.map { try compile($0, entity: entity) }
            switch predicates.count {
            case 0: return { _ in true }
            case 1: return predicates[0]
            case 2:
                let (a, b) = (predicates[0], predicates[1])
                return { a($0) && b($0) }
            case 3:
                let (a, b, c) = (predicates[0], predicates[1], predicates[2])
                return { a($0) && b($0) && c($0) }
            default:
                return { snapshot in predicates.allSatisfy { $0(snapshot) } }
            }
        case .or(let items):
            let predicates = try items.map { try compile($0, entity: entity) }
            if predicates.count == 2 {
                let (a, b) = (predicates[0], predicates[1])
                return { a($0) || b($0) }
            }
            return { snapshot in predicates.contains { $0(snapshot) } }
        case .not(let item):
            let predicate = try compile(item, entity: entity)
            return { !predicate($0) }
        }
    }

    // MARK: Conditions

    private func compare(
        _ path: StorePath, _ op: StoreComparisonOperator, _ value: StoreValue, entity: Schema.Entity
    ) throws -> Predicate {
        let isEquality = op == .equal || op == .notEqual
        let allowsReference = isEquality && (value.isNull || value.referencedIdentifiers.count == 1)
        if path.isDirect, let slot = try directSlot(path.property, entity: entity, allowsReference: allowsReference) {
            return Self.compareSlot(slot, op, value)
        }
        let get = try getter(path, entity: entity, expecting: allowsReference ? .attributeOrReference : .attribute)
        return { ValueSemantics.holds(op, get($0), value) }
    }

    /// Comparisons of a property of the snapshot itself, specialised for the common kinds.
    private static func compareSlot(_ slot: Int, _ op: StoreComparisonOperator, _ value: StoreValue) -> Predicate {
        switch value {
        case .int(let constant):
            return { snapshot in
                if case .int(let stored) = snapshot.values[slot] {
                    return ValueSemantics.apply(op, stored, constant)
                }
                return ValueSemantics.holds(op, snapshot.values[slot], value)
            }
        case .double(let constant):
            return { snapshot in
                if case .double(let stored) = snapshot.values[slot] {
                    return ValueSemantics.apply(op, stored, constant)
                }
                return ValueSemantics.holds(op, snapshot.values[slot], value)
            }
        case .string(let constant):
            return { snapshot in
                if case .string(let stored) = snapshot.values[slot] {
                    return ValueSemantics.apply(op, stored, constant)
                }
                return ValueSemantics.holds(op, snapshot.values[slot], value)
            }
        case .bool(let constant) where op == .equal || op == .notEqual:
            let wanted = op == .equal
            return { snapshot in
                if case .bool(let stored) = snapshot.values[slot] { return (stored == constant) == wanted }
                return ValueSemantics.holds(op, snapshot.values[slot], value)
            }
        default:
            return { ValueSemantics.holds(op, $0.values[slot], value) }
        }
    }

    private func membership(_ path: StorePath, _ values: [StoreValue], entity: Schema.Entity) throws -> Predicate {
        let references = values.allSatisfy { $0.isNull || $0.referencedIdentifiers.count == 1 }
        let get = try getter(path, entity: entity, expecting: references ? .attributeOrReference : .attribute)
        let test = Self.membershipTest(values)
        return { test(get($0)) }
    }

    /// Whether a value is one of `values`, by `==` (numbers of different kinds compare numerically).
    package static func membershipTest(_ values: [StoreValue]) -> ValueTest {
        // Hashing agrees with `==` for every kind but decimals, which compare numerically.
        let hashable = !values.contains { if case .decimal = $0 { true } else { false } }
        guard hashable, let first = values.first else {
            return { value in values.contains { ValueSemantics.equals(value, $0) } }
        }
        let set = Set(values)
        return { value in
            if set.contains(value) { return true }
            guard value.isNumber, !value.isSameKind(as: first) else { return false }
            return values.contains { ValueSemantics.equals(value, $0) }
        }
    }

    /// Whether a stored array has an element equal to `element`, by `==` as ``membershipTest(_:)``
    /// compares; `false` for a value that is not an array (a `nil` array).
    package static func elementTest(_ element: StoreValue) -> ValueTest {
        { stored in
            guard case .array(let elements) = stored else { return false }
            return elements.contains { ValueSemantics.equals($0, element) }
        }
    }

    /// `range.contains(value)` as Swift's range types define it: `lower <= value`, `value <= upper`
    /// or `value < upper`.
    package static func contains(_ range: StoreRange, _ value: StoreValue) -> Bool {
        if value.isNull { return false }
        if let lower = range.lower, !ValueSemantics.holds(.lessOrEqual, lower, value) { return false }
        if let upper = range.upper {
            return ValueSemantics.holds(range.includesUpper ? .lessOrEqual : .less, value, upper)
        }
        return true
    }

    private func text(_ path: StorePath, _ operation: StoreTextOperation, entity: Schema.Entity) throws -> Predicate {
        let get = try getter(path, entity: entity, expecting: .attribute)
        let test = try Self.textTest(operation, path: path, entity: entity)
        return { snapshot in
            guard case .string(let string) = get(snapshot) else { return false }
            return test(string)
        }
    }

    /// A text operation on a string, as `#Predicate` evaluates it. Throws
    /// ``DataStoreError/invalidPredicate`` for a regular expression that does not compile.
    package static func textTest(
        _ operation: StoreTextOperation, path: StorePath, entity: Schema.Entity
    ) throws -> @Sendable (String) -> Bool {
        switch operation {
        case .contains(let text):
            return { TextSemantics.contains($0, text) }
        case .hasPrefix(let text):
            return { TextSemantics.startsWith($0, text) }
        case .matchesRegex(let pattern):
            let regex: TextSemantics.CompiledRegex
            do {
                regex = try TextSemantics.CompiledRegex(pattern)
            } catch {
                throw DataStoreError(
                    .invalidPredicate, "the regular expression '\(pattern)' on '\(path)' does not compile",
                    remedy: "Fix the pattern", entityName: entity.name, underlyingError: error)
            }
            return { regex.matches(in: $0) }
        }
    }

    private func quantifier(
        _ filter: StoreFilter, path: StorePath, inner: StoreFilter, entity: Schema.Entity
    ) throws -> Predicate {
        guard let resolve else { throw Self.needsResolver(path, entity: entity) }
        let isAny = if case .any = filter { true } else { false }
        let (hops, last, owner) = try walk(path, from: entity)
        var destination: Schema.Entity?
        if let owner {
            guard let relationship = last.relationship, !relationship.isToOne else {
                throw DataStoreError(
                    .invalidPredicate, "'\(path)' of '\(entity.name)' is not a to-many relationship",
                    remedy: "Use contains(where:) and allSatisfy on to-many relationships", entityName: owner.name)
            }
            destination = schema?.entity(named: relationship.destination)
        }
        let test: Predicate
        if let destination {
            test = try compile(inner, entity: destination)
        } else {
            // Without a schema, compile against each related entity as it is met (one entity per relationship).
            let lazy = LazyCompiled(compiler: self, filter: inner)
            test = { lazy.predicate(for: $0.entity)?($0) ?? false }
        }
        let follow = Self.follower(hops, resolve: resolve)
        let name = last.name
        let fixedSlot = last.slot
        return { snapshot in
            guard let owner = follow(snapshot) else { return !isAny }
            guard let slot = fixedSlot ?? owner.entity.slot(of: name),
                case .references(let ids) = owner.values[slot]
            else { return !isAny }
            for id in ids {
                guard let related = resolve(id) else { continue }
                if test(related) == isAny { return isAny }
            }
            return !isAny
        }
    }

    // MARK: Paths

    enum Expectation { case attribute, attributeOrReference }

    private struct Step {
        let name: String
        /// The slot in the entity the step starts from, when known at compile time.
        let slot: Int?
        /// The relationship the step follows or ends at, when known.
        let relationship: Schema.Relationship?
    }

    /// The slot of a property of the entity itself, checking its kind.
    private func directSlot(_ name: String, entity: Schema.Entity, allowsReference: Bool) throws -> Int? {
        guard let property = entity.property(named: name) else { throw Self.unknown(name, entity: entity) }
        if case .relationship(let relationship) = property, !(allowsReference && relationship.isToOne) {
            throw Self.notAnAttribute(name, entity: entity)
        }
        return property.slot
    }

    /// The to-one hops of a path and its last step, with the entity that owns the last step (if known).
    private func walk(_ path: StorePath, from entity: Schema.Entity) throws -> ([Step], Step, Schema.Entity?) {
        var current: Schema.Entity? = entity
        var hops: [Step] = []
        for name in path.components.dropLast() {
            guard let known = current else {
                hops.append(Step(name: name, slot: nil, relationship: nil))
                continue
            }
            guard let relationship = known.relationship(named: name) else {
                if known.property(named: name) == nil { throw Self.unknown(name, entity: known) }
                throw DataStoreError(
                    .invalidPredicate,
                    "'\(name)' of '\(known.name)' is not a relationship, so '\(path)' cannot go through it",
                    remedy: "Go through to-one relationships only", entityName: known.name)
            }
            guard relationship.isToOne else {
                throw DataStoreError(
                    .invalidPredicate, "'\(path)' goes through the to-many relationship '\(known.name).\(name)'",
                    remedy: "Use contains(where:) or allSatisfy for to-many relationships", entityName: known.name)
            }
            hops.append(Step(name: name, slot: relationship.slot, relationship: relationship))
            current = schema?.entity(named: relationship.destination)
        }
        let last = path.property
        guard let owner = current else { return (hops, Step(name: last, slot: nil, relationship: nil), nil) }
        guard let property = owner.property(named: last) else { throw Self.unknown(last, entity: owner) }
        let relationship: Schema.Relationship? = if case .relationship(let r) = property { r } else { nil }
        return (hops, Step(name: last, slot: property.slot, relationship: relationship), owner)
    }

    /// A closure reading the value at a path (``StoreValue/null`` through a missing link).
    private func getter(_ path: StorePath, entity: Schema.Entity, expecting: Expectation) throws -> Getter {
        let (hops, last, owner) = try walk(path, from: entity)
        if let owner, let relationship = last.relationship {
            guard expecting == .attributeOrReference, relationship.isToOne else {
                throw Self.notAnAttribute(last.name, entity: owner)
            }
        }
        if hops.isEmpty, let slot = last.slot { return { $0.values[slot] } }
        guard let resolve else { throw Self.needsResolver(path, entity: entity) }
        let follow = Self.follower(hops, resolve: resolve)
        let name = last.name
        let fixedSlot = last.slot
        return { snapshot in
            guard let owner = follow(snapshot), let slot = fixedSlot ?? owner.entity.slot(of: name) else {
                return .null
            }
            return owner.values[slot]
        }
    }

    /// A closure following to-one hops from a snapshot; `nil` where a link is `nil` or missing.
    private static func follower(
        _ hops: [Step], resolve: @escaping Resolver
    ) -> @Sendable (DefaultSnapshot) -> DefaultSnapshot? {
        if hops.isEmpty { return { $0 } }
        return { snapshot in
            var current = snapshot
            for hop in hops {
                guard let slot = hop.slot ?? current.entity.slot(of: hop.name),
                    case .reference(let id) = current.values[slot], let next = resolve(id)
                else { return nil }
                current = next
            }
            return current
        }
    }

    // MARK: Errors

    private static func unknown(_ name: String, entity: Schema.Entity) -> DataStoreError {
        DataStoreError(
            .invalidPredicate, "'\(name)' is not a stored property of '\(entity.name)'",
            remedy: "Use one of: \(entity.properties.map { "'\($0.name)'" }.joined(separator: ", "))",
            entityName: entity.name)
    }

    private static func notAnAttribute(_ name: String, entity: Schema.Entity) -> DataStoreError {
        DataStoreError(
            .invalidPredicate,
            "'\(entity.name).\(name)' is a relationship, not an attribute, where a value is compared",
            remedy: "Compare a to-one relationship only with == or != to nil or a reference", entityName: entity.name)
    }

    private static func needsResolver(_ path: StorePath, entity: Schema.Entity) -> DataStoreError {
        DataStoreError(
            .unsupportedFeature,
            "the filter on '\(path)' of '\(entity.name)' reads related models, and no resolver was given",
            remedy: "Pass 'resolve:' to SnapshotEvaluator so it can read related snapshots", entityName: entity.name)
    }
}

/// A filter compiled per entity on first use (quantifiers without a schema).
private final class LazyCompiled: @unchecked Sendable {
    // Safety: the cache is only touched under `lock`; compiled closures are Sendable.
    private let compiler: CompiledFilter
    private let filter: StoreFilter
    private let lock = NSLock()
    private var cache: [String: CompiledFilter.Predicate?] = [:]

    init(compiler: CompiledFilter, filter: StoreFilter) {
        self.compiler = compiler
        self.filter = filter
    }

    func predicate(for entity: Schema.Entity) -> CompiledFilter.Predicate? {
        lock.lock()
        defer { lock.unlock() }
        if let cached = cache[entity.name] { return cached }
        let compiled = try? compiler.compile(filter, entity: entity)
        cache[entity.name] = compiled
        return compiled
    }
}

/// String tests with exactly the semantics `#Predicate` gives them.
enum TextSemantics {
    /// `Collection.contains(_:)`, character by character, as `CollectionContainsCollection` evaluates it
    /// (an empty text is found in every string, unlike Foundation's `String.contains(_:)`).
    static func contains<A: Collection, B: Collection>(_ base: A, _ other: B) -> Bool
    where A.Element == B.Element, A.Element: Equatable {
        base.contains(other)
    }

    /// `Sequence.starts(with:)`, character by character, as `SequenceStartsWith` evaluates it.
    static func startsWith<A: Sequence, B: Sequence>(_ base: A, _ prefix: B) -> Bool
    where A.Element == B.Element, A.Element: Equatable {
        base.starts(with: prefix)
    }

    /// A compiled regular expression, shared by the closures of one query.
    struct CompiledRegex: @unchecked Sendable {
        // Safety: a `Regex` is an immutable value once built; Foundation's `PredicateRegex` shares
        // one between threads the same way.
        let regex: Regex<AnyRegexOutput>

        init(_ pattern: String) throws { regex = try Regex(pattern) }

        /// Whether the string contains a match, as `StringContainsRegex` evaluates it.
        func matches(in string: String) -> Bool { string.contains(regex) }
    }
}
