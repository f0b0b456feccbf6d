import Foundation

/// A predicate with its constants taken out: the expression's type (which spells every node's
/// type), the key paths it reads, its operators and variables, and the kind of each constant,
/// with the constants themselves in ``operands``. Two predicates with one shape translate into
/// filters of one ``StoreFilterShape`` whenever the translation only carries their constants
/// through, which ``FetchPlanCache`` checks before it keeps a plan.
///
/// Only predicates made of the nodes this file lists have a shape; any other node (arithmetic,
/// ranges, casts, conditionals, subscripts: nodes that compute with their constants or may
/// throw) leaves the predicate to be translated on every fetch.
struct PredicateShape: Hashable {
    /// One piece of the shape besides the expression's type.
    enum Token: Equatable {
        /// A key path, compared by identity: the shape keeps it, so its address is never reused
        /// while the shape exists, and a key path made elsewhere only misses the cache.
        case keyPath(AnyKeyPath)
        /// A variable (numbered by first appearance), an operator, or a constant's kind.
        case code(Int)
        /// A constant's kind that a number does not capture (a reference names its entity and store).
        case kind(String)

        static func == (lhs: Token, rhs: Token) -> Bool {
            switch (lhs, rhs) {
            case (.keyPath(let a), .keyPath(let b)): a === b
            case (.code(let a), .code(let b)): a == b
            case (.kind(let a), .kind(let b)): a == b
            default: false
            }
        }
    }

    let expressionType: ObjectIdentifier
    private(set) var tokens: [Token] = []
    /// The constants in the order the walk met them, as stored values (`nil`: not storable).
    private(set) var operands: [StoreValue?] = []
    private var variables: [PredicateExpressions.VariableID] = []
    /// The hash of the type and the tokens, combined as the walk adds them.
    private var hasher = Hasher()
    private var hashCode = 0

    /// The shape of a predicate, or `nil` when it has a node without one.
    init?<T>(_ predicate: Predicate<T>) {
        expressionType = ObjectIdentifier(type(of: predicate.expression))
        hasher.combine(expressionType)
        variable(predicate.variable.key)
        guard visit(predicate.expression) else { return nil }
        hashCode = hasher.finalize()
    }

    /// Equal when everything but the constants' values is.
    static func == (lhs: PredicateShape, rhs: PredicateShape) -> Bool {
        lhs.hashCode == rhs.hashCode && lhs.expressionType == rhs.expressionType && lhs.tokens == rhs.tokens
    }

    /// Hashes everything but the constants' values.
    func hash(into hasher: inout Hasher) { hasher.combine(hashCode) }

    private mutating func append(_ token: Token) {
        tokens.append(token)
        switch token {
        case .keyPath(let keyPath): hasher.combine(ObjectIdentifier(keyPath))
        case .code(let code): hasher.combine(code)
        case .kind(let kind): hasher.combine(kind)
        }
    }

    mutating func variable(_ key: PredicateExpressions.VariableID) {
        if let index = variables.firstIndex(of: key) {
            append(.code(Code.variable + index))
        } else {
            variables.append(key)
            append(.code(Code.variable + variables.count - 1))
        }
    }

    mutating func keyPath(_ keyPath: AnyKeyPath) { append(.keyPath(keyPath)) }

    mutating func comparison(_ op: StoreComparisonOperator) {
        append(.code(Code.comparison + (StoreComparisonOperator.allCases.firstIndex(of: op) ?? 0)))
    }

    mutating func constant<Value>(_ value: Value) {
        let stored = try? ValueCodecs.codec(for: Value.self)?.encode(value)
        operands.append(stored)
        guard let stored else {
            append(.code(Code.unstorable))
            return
        }
        if let code = stored.shapeCode {
            append(.code(Code.constant + code))
        } else {
            append(.kind(stored.shapeKind))
        }
    }

    /// The ranges of token codes.
    private enum Code {
        static let unstorable = 1
        static let comparison = 1_000
        static let variable = 2_000
        static let constant = 1_000_000
    }

    /// Visits a node; `false` when it has no shape.
    mutating func visit<E: PredicateExpression>(_ expression: E) -> Bool {
        guard let node = expression as? any ShapedExpression else { return false }
        return node.collect(into: &self)
    }

    /// Visits two operands in order.
    mutating func visit<A: PredicateExpression, B: PredicateExpression>(_ first: A, _ second: B) -> Bool {
        visit(first) && visit(second)
    }

    /// Visits a node with a closure: the closure's variable, then its input and its body.
    mutating func visit<A: PredicateExpression, B: PredicateExpression>(
        binding key: PredicateExpressions.VariableID, _ input: A, _ body: B
    ) -> Bool {
        variable(key)
        return visit(input, body)
    }
}

/// A predicate node with a shape: it adds its own pieces and visits its operands, in a fixed order.
protocol ShapedExpression: PredicateExpression {
    /// Adds the node to the shape; `false` when a part of it has none.
    func collect(into shape: inout PredicateShape) -> Bool
}

extension PredicateExpressions.Value: ShapedExpression {
    func collect(into shape: inout PredicateShape) -> Bool {
        shape.constant(value)
        return true
    }
}

extension PredicateExpressions.NilLiteral: ShapedExpression {
    func collect(into shape: inout PredicateShape) -> Bool { true }
}

extension PredicateExpressions.Variable: ShapedExpression {
    func collect(into shape: inout PredicateShape) -> Bool {
        shape.variable(key)
        return true
    }
}

extension PredicateExpressions.KeyPath: ShapedExpression {
    func collect(into shape: inout PredicateShape) -> Bool {
        shape.keyPath(keyPath)
        return shape.visit(root)
    }
}

extension PredicateExpressions.Equal: ShapedExpression {
    func collect(into shape: inout PredicateShape) -> Bool { shape.visit(lhs, rhs) }
}

extension PredicateExpressions.NotEqual: ShapedExpression {
    func collect(into shape: inout PredicateShape) -> Bool { shape.visit(lhs, rhs) }
}

extension PredicateExpressions.Comparison: ShapedExpression {
    func collect(into shape: inout PredicateShape) -> Bool {
        shape.comparison(storeOperator)
        return shape.visit(lhs, rhs)
    }
}

extension PredicateExpressions.Conjunction: ShapedExpression {
    func collect(into shape: inout PredicateShape) -> Bool { shape.visit(lhs, rhs) }
}

extension PredicateExpressions.Disjunction: ShapedExpression {
    func collect(into shape: inout PredicateShape) -> Bool { shape.visit(lhs, rhs) }
}

extension PredicateExpressions.Negation: ShapedExpression {
    func collect(into shape: inout PredicateShape) -> Bool { shape.visit(wrapped) }
}

extension PredicateExpressions.OptionalFlatMap: ShapedExpression {
    func collect(into shape: inout PredicateShape) -> Bool { shape.visit(binding: variable.key, wrapped, transform) }
}

extension PredicateExpressions.SequenceContainsWhere: ShapedExpression {
    func collect(into shape: inout PredicateShape) -> Bool { shape.visit(binding: variable.key, sequence, test) }
}

extension PredicateExpressions.SequenceAllSatisfy: ShapedExpression {
    func collect(into shape: inout PredicateShape) -> Bool { shape.visit(binding: variable.key, sequence, test) }
}

extension PredicateExpressions.SequenceContains: ShapedExpression {
    func collect(into shape: inout PredicateShape) -> Bool { shape.visit(sequence, element) }
}

extension PredicateExpressions.SequenceStartsWith: ShapedExpression {
    func collect(into shape: inout PredicateShape) -> Bool { shape.visit(base, prefix) }
}

extension PredicateExpressions.CollectionContainsCollection: ShapedExpression {
    func collect(into shape: inout PredicateShape) -> Bool { shape.visit(base, other) }
}
