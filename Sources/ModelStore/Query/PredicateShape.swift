import Foundation

/// A predicate with its constants taken out: the expression's type (which spells every node's
/// type), the key paths it reads, its operators and variables, and the kind of each constant,
/// with the constants themselves in ``operands``. Two predicates with one shape translate into
/// filters of one ``StoreFilterShape`` whenever the translation only carries their constants
/// through, which ``FetchPlanCache`` checks before it keeps a plan.
///
/// Only predicates made of the nodes this file lists have a shape; any other node (arithmetic,
/// ranges, casts, conditionals, subscripts: nodes that compute with their constants or may
/// throw) leaves the predicate to be translated on every fetch. The nodes conform to
/// ``ShapedExpression`` conditionally, when their operands do, so one dynamic cast of the whole
/// expression decides whether it has a shape, and the walk below it is static calls.
final class PredicateShape: Hashable {
    // The walk in `init` is the shape's only writer, on one thread before anyone else sees the
    // shape, and nothing changes it afterwards, so its properties skip the run-time exclusivity
    // checks (about a quarter of making a shape, by callgrind).
    let expressionType: ObjectIdentifier
    /// One number per piece of the shape, in the order the walk meets them: a key path as its
    /// object's address (``keyPaths`` keeps the object, so the address is never reused while the
    /// shape exists; a key path made elsewhere only misses the cache), anything else as a negative
    /// code. Two predicates of one expression type meet the same kinds of piece in the same order.
    @exclusivity(unchecked) private(set) var tokens: [Int] = []
    /// The key paths whose addresses ``tokens`` holds.
    @exclusivity(unchecked) private var keyPaths: [AnyKeyPath] = []
    /// The kinds of constants a code does not capture (a reference names its entity and store), in order.
    @exclusivity(unchecked) private var kinds: [String] = []
    /// The constants in the order the walk met them, as stored values (`nil`: not storable).
    @exclusivity(unchecked) private(set) var operands: [StoreValue?] = []
    /// The predicate's own variable, numbered 0; a closure's variables follow in ``otherVariables``.
    @exclusivity(unchecked) private var firstVariable: PredicateExpressions.VariableID?
    @exclusivity(unchecked) private var otherVariables: [PredicateExpressions.VariableID] = []
    /// The hash of the type and the pieces, combined as the walk adds them.
    @exclusivity(unchecked) private var hasher = Hasher()
    /// The hash of the type and the pieces (see ``hasher``).
    @exclusivity(unchecked) private(set) var hashCode = 0

    /// The shape of a predicate, or `nil` when it has a node without one.
    init?<T>(_ predicate: Predicate<T>) {
        let expression = predicate.expression
        let type = Swift.type(of: expression)
        guard let shaped = Self.shapedType(of: type) else { return nil }
        expressionType = ObjectIdentifier(type)
        hasher.combine(expressionType)
        tokens.reserveCapacity(8)
        variable(predicate.variable.key)
        Self.collect(expression, as: shaped, into: self)
        hashCode = hasher.finalize()
    }

    /// Whether each expression type seen has a shape: a conditional conformance takes the runtime
    /// longer to check than the whole walk, so it is checked once per type.
    private static let shapedTypes = LockedValue<[ObjectIdentifier: (any ShapedExpression.Type)?]>([:])

    private static func shapedType(of type: any StandardPredicateExpression<Bool>.Type) -> (any ShapedExpression.Type)?
    {
        let key = ObjectIdentifier(type)
        if let known = shapedTypes.withLock({ $0[key] }) { return known }
        let shaped = type as? any ShapedExpression.Type
        shapedTypes.withLock { $0[key] = .some(shaped) }
        return shaped
    }

    /// Walks `expression`, whose type is `shaped`, with static calls from its root down.
    private static func collect<E: StandardPredicateExpression<Bool>>(
        _ expression: E, as shaped: any ShapedExpression.Type, into shape: PredicateShape
    ) {
        func walk<S: ShapedExpression>(_: S.Type) {
            // `S` is `E`: `shaped` is the metatype of this expression's type.
            withUnsafePointer(to: expression) { pointer in
                UnsafeRawPointer(pointer).assumingMemoryBound(to: S.self).pointee.collect(into: shape)
            }
        }
        walk(shaped)
    }

    /// Equal when everything but the constants' values is.
    static func == (lhs: PredicateShape, rhs: PredicateShape) -> Bool {
        lhs.hashCode == rhs.hashCode && lhs.expressionType == rhs.expressionType && lhs.tokens == rhs.tokens
            && lhs.kinds == rhs.kinds
    }

    /// Hashes everything but the constants' values.
    func hash(into hasher: inout Hasher) { hasher.combine(hashCode) }

    private func append(code: Int) {
        // Negative, so that no code is ever taken for a key path's address.
        tokens.append(-1 - code)
        hasher.combine(-1 - code)
    }

    func variable(_ key: PredicateExpressions.VariableID) {
        guard let first = firstVariable else {
            firstVariable = key
            append(code: Code.variable)
            return
        }
        if first == key {
            append(code: Code.variable)
        } else if let index = otherVariables.firstIndex(of: key) {
            append(code: Code.variable + 1 + index)
        } else {
            otherVariables.append(key)
            append(code: Code.variable + otherVariables.count)
        }
    }

    func keyPath(_ keyPath: AnyKeyPath) {
        keyPaths.append(keyPath)
        let address = Int(bitPattern: UInt(bitPattern: ObjectIdentifier(keyPath)))
        tokens.append(address)
        hasher.combine(address)
    }

    func comparison(_ op: StoreComparisonOperator) {
        append(code: Code.comparison + (StoreComparisonOperator.allCases.firstIndex(of: op) ?? 0))
    }

    func constant<Value>(_ value: Value) {
        let stored = try? ValueCodecs.codec(for: Value.self)?.encode(value)
        operands.append(stored)
        guard let stored else {
            append(code: Code.unstorable)
            return
        }
        if let code = stored.shapeCode {
            append(code: Code.constant + code)
        } else {
            let kind = stored.shapeKind
            kinds.append(kind)
            hasher.combine(kind)
            append(code: Code.kind)
        }
    }

    /// The ranges of token codes.
    private enum Code {
        static let unstorable = 1
        static let kind = 2
        static let comparison = 1_000
        static let variable = 2_000
        static let constant = 1_000_000
    }

    /// Visits a node with a closure: the closure's variable, then its input and its body.
    func visit<A: ShapedExpression, B: ShapedExpression>(
        binding key: PredicateExpressions.VariableID, _ input: A, _ body: B
    ) {
        variable(key)
        input.collect(into: self)
        body.collect(into: self)
    }
}

/// A predicate node with a shape: it adds its own pieces and visits its operands, in a fixed order.
///
/// A node with operands conforms when its operands do, so a predicate has a shape exactly when
/// its expression's type conforms.
protocol ShapedExpression: PredicateExpression, SendableMetatype {
    /// Adds the node and its operands to the shape.
    func collect(into shape: PredicateShape)
}

extension PredicateExpressions.Value: ShapedExpression {
    func collect(into shape: PredicateShape) { shape.constant(value) }
}

extension PredicateExpressions.NilLiteral: ShapedExpression {
    func collect(into shape: PredicateShape) {}
}

extension PredicateExpressions.Variable: ShapedExpression {
    func collect(into shape: PredicateShape) { shape.variable(key) }
}

extension PredicateExpressions.KeyPath: ShapedExpression where Root: ShapedExpression {
    func collect(into shape: PredicateShape) {
        shape.keyPath(keyPath)
        root.collect(into: shape)
    }
}

extension PredicateExpressions.Equal: ShapedExpression where LHS: ShapedExpression, RHS: ShapedExpression {
    func collect(into shape: PredicateShape) {
        lhs.collect(into: shape)
        rhs.collect(into: shape)
    }
}

extension PredicateExpressions.NotEqual: ShapedExpression where LHS: ShapedExpression, RHS: ShapedExpression {
    func collect(into shape: PredicateShape) {
        lhs.collect(into: shape)
        rhs.collect(into: shape)
    }
}

extension PredicateExpressions.Comparison: ShapedExpression where LHS: ShapedExpression, RHS: ShapedExpression {
    func collect(into shape: PredicateShape) {
        shape.comparison(storeOperator)
        lhs.collect(into: shape)
        rhs.collect(into: shape)
    }
}

extension PredicateExpressions.Conjunction: ShapedExpression where LHS: ShapedExpression, RHS: ShapedExpression {
    func collect(into shape: PredicateShape) {
        lhs.collect(into: shape)
        rhs.collect(into: shape)
    }
}

extension PredicateExpressions.Disjunction: ShapedExpression where LHS: ShapedExpression, RHS: ShapedExpression {
    func collect(into shape: PredicateShape) {
        lhs.collect(into: shape)
        rhs.collect(into: shape)
    }
}

extension PredicateExpressions.Negation: ShapedExpression where Wrapped: ShapedExpression {
    func collect(into shape: PredicateShape) { wrapped.collect(into: shape) }
}

extension PredicateExpressions.OptionalFlatMap: ShapedExpression
where LHS: ShapedExpression, RHS: ShapedExpression {
    func collect(into shape: PredicateShape) { shape.visit(binding: variable.key, wrapped, transform) }
}

extension PredicateExpressions.SequenceContainsWhere: ShapedExpression
where LHS: ShapedExpression, RHS: ShapedExpression {
    func collect(into shape: PredicateShape) { shape.visit(binding: variable.key, sequence, test) }
}

extension PredicateExpressions.SequenceAllSatisfy: ShapedExpression
where LHS: ShapedExpression, RHS: ShapedExpression {
    func collect(into shape: PredicateShape) { shape.visit(binding: variable.key, sequence, test) }
}

extension PredicateExpressions.SequenceContains: ShapedExpression
where LHS: ShapedExpression, RHS: ShapedExpression {
    func collect(into shape: PredicateShape) {
        sequence.collect(into: shape)
        element.collect(into: shape)
    }
}

extension PredicateExpressions.SequenceStartsWith: ShapedExpression
where Base: ShapedExpression, Prefix: ShapedExpression {
    func collect(into shape: PredicateShape) {
        base.collect(into: shape)
        prefix.collect(into: shape)
    }
}

extension PredicateExpressions.CollectionContainsCollection: ShapedExpression
where Base: ShapedExpression, Other: ShapedExpression {
    func collect(into shape: PredicateShape) {
        base.collect(into: shape)
        other.collect(into: shape)
    }
}
