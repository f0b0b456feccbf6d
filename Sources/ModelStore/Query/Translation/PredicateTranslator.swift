import Foundation

/// A `Predicate` node the translator understands: conformed per node type, one expression family
/// per file (`Translate+*.swift`), in the manner of swift-foundation's NSPredicate converter.
///
/// A node that does not conform, or whose `translate` returns `nil`, is constant-folded when it
/// reads no variable; otherwise it is left to the residual that runs on models.
protocol TranslatableExpression: PredicateExpression {
    /// The node as a term, or `nil` when it cannot be translated. Throws ``DataStoreError`` only for
    /// predicates that are wrong whatever the data (a key path that is not a stored property).
    func translate(in translator: inout PredicateTranslator) throws -> Term?
    /// The node's operands that are evaluated with the node's own bindings (not closure bodies).
    var operands: [any PredicateExpression] { get }
    /// The bodies of the node's closures (flatMap, contains(where:), allSatisfy), evaluated with more bindings.
    var closureBodies: [any PredicateExpression] { get }
    /// Whether evaluating the node itself can throw, apart from its operands.
    var canThrowItself: Bool { get }
    /// The node in Swift-like notation.
    func render(_ renderer: inout PredicateRenderer) -> String
}

extension TranslatableExpression {
    var canThrowItself: Bool { false }
    var closureBodies: [any PredicateExpression] { [] }
}

/// A translated value: what a predicate node means in store terms.
enum Term {
    /// Cannot be translated.
    case opaque
    /// A value that reads no variable (folded).
    case constant(Constant)
    /// A model: the scope's own (empty path) or one reached through to-one relationships.
    case model(ModelReference)
    /// The related models of a to-many relationship (the path ends with it).
    case models(ModelReference)
    /// The `persistentModelID` of a model.
    case identifier(ModelReference)
    /// A stored attribute.
    case attribute(AttributeReference)
    /// `attribute ?? constant`.
    case coalesced(AttributeReference, Constant)
    /// A condition.
    case filter(StoreFilter, scope: Int?)
    /// A `Bool?`: `nil` where `isNull` holds, else whether `filter` holds.
    case optionalFilter(StoreFilter, isNull: StoreFilter, scope: Int)
}

/// A model a term refers to.
struct ModelReference {
    /// The quantifier scope the path starts from (0: the fetched entity).
    var scope: Int
    /// To-one relationships from the scope's model (or, for ``Term/models(_:)``, ending with a to-many one).
    var path: [String]
    /// The entity of the model(s).
    var entity: Schema.Entity
    /// Whether the reference may be `nil` in Swift.
    var isOptional: Bool
    /// For a model cast to a subclass (`$0 as? BusinessTrip`), the condition under which the cast
    /// succeeds: its class is the subclass or one of its subclasses.
    var classFilter: StoreFilter? = nil
}

/// A stored attribute a term refers to.
struct AttributeReference {
    var scope: Int
    var path: StorePath
    /// The attribute's stored type (the raw type for `.rawValue` of an enum).
    var valueType: AttributeType
    /// Whether the value may be `nil` in Swift (an optional attribute, or one reached through a `nil`able link).
    var isOptional: Bool
}

/// A folded value, with its stored form computed on demand (through the codec of its static type).
struct Constant {
    let value: Any
    private let encoder: () -> StoreValue?

    init<Value>(_ value: Value) {
        self.value = value
        self.encoder = { try? ValueCodecs.codec(for: Value.self)?.encode(value) }
    }

    /// The stored form, or `nil` if the type is not storable.
    var storeValue: StoreValue? { encoder() }
    /// The value as a `Bool`, if it is one.
    var bool: Bool? { value as? Bool }
    /// Whether the value is `nil`.
    var isNil: Bool {
        switch value {
        case Optional<Any>.none: true
        default: false
        }
    }
}

/// Translates a `Predicate`'s expression tree into ``StoreFilter``s over stored property names.
struct PredicateTranslator {
    let schema: Schema
    private(set) var bindings: [PredicateExpressions.VariableID: Term] = [:]
    private(set) var scopeEntities: [Schema.Entity]
    /// Entities reached through relationships by the terms translated so far.
    var reachedEntities: Set<String> = []
    /// Why a stored attribute read so far cannot be compared in a store (an encrypted or transformed
    /// one), for `explain`; `nil` when none was read.
    var opaqueReason: String?

    init(schema: Schema, entity: Schema.Entity) {
        self.schema = schema
        self.scopeEntities = [entity]
    }

    // MARK: Dispatch

    /// The term for any node: its own translation, else its folded value, else ``Term/opaque``.
    mutating func term<E: PredicateExpression>(_ expression: E) throws -> Term {
        if let node = expression as? any TranslatableExpression, let term = try translateNode(node) {
            return term
        }
        if let constant = Self.fold(expression) { return .constant(constant) }
        return .opaque
    }

    private mutating func translateNode<E: TranslatableExpression>(_ node: E) throws -> Term? {
        try node.translate(in: &self)
    }

    /// The value of a subtree that reads no variable, evaluated once; `nil` if it reads one or fails.
    static func fold<E: PredicateExpression>(_ expression: E) -> Constant? {
        guard let value = try? expression.evaluate(PredicateBindings()) else { return nil }
        return Constant(value)
    }

    // MARK: Variables and scopes

    /// Binds a closure variable (of a flatMap or a quantifier) to a term while translating its body.
    mutating func withBinding<R>(
        _ key: PredicateExpressions.VariableID, to term: Term, _ body: (inout PredicateTranslator) throws -> R
    ) rethrows -> R {
        let previous = bindings[key]
        bindings[key] = term
        defer { bindings[key] = previous }
        return try body(&self)
    }

    /// The term a variable is bound to, or `nil` if it is not bound.
    func binding(_ key: PredicateExpressions.VariableID) -> Term? { bindings[key] }

    /// Binds the predicate's input variable to the fetched entity.
    mutating func bindRoot(_ key: PredicateExpressions.VariableID) {
        bindings[key] = .model(ModelReference(scope: 0, path: [], entity: scopeEntities[0], isOptional: false))
    }

    /// Opens a new quantifier scope over an entity and returns its number.
    mutating func openScope(_ entity: Schema.Entity) -> Int {
        scopeEntities.append(entity)
        return scopeEntities.count - 1
    }

    // MARK: Filters

    /// A term as a condition, with its scope: conditions, stored non-optional `Bool`s, `Bool` constants.
    func condition(_ term: Term) -> (filter: StoreFilter, scope: Int?)? {
        switch term {
        case .filter(let filter, let scope): return (filter, scope)
        case .constant(let constant):
            guard let value = constant.bool else { return nil }
            return (.constant(value), nil)
        case .attribute(let reference) where !reference.isOptional && reference.valueType.unwrapped == .bool:
            return (.compare(reference.path, .equal, .bool(true)), reference.scope)
        default: return nil
        }
    }

    /// The scope two conditions share, or `.none` if they belong to different scopes.
    static func sharedScope(_ a: Int?, _ b: Int?) -> Int?? {
        switch (a, b) {
        case (nil, _): return .some(b)
        case (_, nil): return .some(a)
        case (let x?, let y?): return x == y ? .some(x) : .none
        }
    }

    // MARK: Key paths

    /// What a key path on a model reads: a stored property, its identifier, or an error.
    mutating func member(
        of model: ModelReference, keyPath: AnyKeyPath, valueType: Any.Type
    ) throws -> Term {
        let entity = model.entity
        if Self.isIdentifierKeyPath(keyPath, of: entity.modelType, valueType: valueType) {
            return .identifier(model)
        }
        guard let name = entity.propertyName(for: keyPath), let property = entity.property(named: name) else {
            throw DataStoreError(
                .invalidPredicate,
                "the predicate reads '\(PredicateRenderer.describe(keyPath))' of '\(entity.name)', "
                    + "which is not a stored property",
                remedy: "Filter on @Attribute or @Relationship properties (computed and plain properties are not "
                    + "stored), or filter the fetched models in Swift",
                entityName: entity.name)
        }
        switch property {
        case .attribute(let attribute) where attribute.transformation != nil || attribute.options.contains(.encrypted):
            // Stored as the transformer's Data or as sealed Data, which no comparison of the Swift value can read.
            if opaqueReason == nil {
                opaqueReason =
                    attribute.options.contains(.encrypted)
                    ? "reads '\(name)', which is encrypted: the store holds it sealed"
                    : "reads '\(name)', which a value transformer stores as Data"
            }
            return .opaque
        case .attribute(let attribute):
            return .attribute(
                AttributeReference(
                    scope: model.scope, path: StorePath(model.path + [name]), valueType: attribute.valueType,
                    isOptional: model.isOptional || attribute.isOptional))
        case .relationship(let relationship):
            guard let destination = schema.entity(named: relationship.destination) else { return .opaque }
            reachedEntities.insert(destination.name)
            let reference = ModelReference(
                scope: model.scope, path: model.path + [name], entity: destination,
                isOptional: relationship.isToOne || model.isOptional)
            return relationship.isToOne ? .model(reference) : .models(reference)
        }
    }

    /// Whether a key path reads a model's `persistentModelID` (directly, or through a property such as
    /// `id` that returns it).
    private static func isIdentifierKeyPath(
        _ keyPath: AnyKeyPath, of type: any PersistentModel.Type, valueType: Any.Type
    ) -> Bool {
        guard valueType == PersistentIdentifier.self else { return false }
        func check<M: PersistentModel>(_: M.Type) -> Bool {
            if keyPath == \M.persistentModelID as AnyKeyPath { return true }
            guard let typed = keyPath as? KeyPath<M, PersistentIdentifier> else { return false }
            let probe = M()
            return probe[keyPath: typed] == probe.persistentModelID
        }
        return check(type)
    }

    // MARK: Types

    /// Whether `==` on values of this stored type means the same in Swift and on stored values.
    static func supportsEquality(_ type: AttributeType) -> Bool {
        switch type.unwrapped {
        case .bool, .integer, .double, .float, .decimal, .string, .date, .data, .uuid, .url: true
        case .enumeration(_, let raw): supportsEquality(raw)
        default: false
        }
    }

    /// Whether `<` on values of this stored type means the same in Swift and on stored values.
    static func supportsOrdering(_ type: AttributeType) -> Bool {
        switch type.unwrapped {
        case .integer, .double, .float, .decimal, .string, .date, .uuid: true
        default: false
        }
    }
}

// MARK: - The whole predicate

/// A predicate split into its top-level conjuncts, each translated or not.
struct TranslatedPredicate {
    /// One operand of the top-level `&&`.
    struct Conjunct {
        /// The Swift expression.
        let expression: any PredicateExpression
        /// Its store-neutral form (scope 0), or `nil` if it must run on models.
        let filter: StoreFilter?
        /// Whether evaluating it on a model may throw (force unwraps, casts, subscripts, unknown nodes).
        let mayThrow: Bool
        /// Entities other than the fetched one that it reads through relationships.
        let reachedEntities: Set<String>
        /// Why it must run on models when it reads an encrypted or transformed attribute.
        var opaqueReason: String? = nil
    }

    let conjuncts: [Conjunct]
    let variable: PredicateExpressions.VariableID

    /// Translates a predicate over an entity.
    ///
    /// Throws ``DataStoreError/invalidPredicate`` for a key path that is not a stored property and for
    /// a constant range whose bounds are reversed, which would crash `Predicate.evaluate`.
    init<T: PersistentModel>(_ predicate: Predicate<T>, entity: Schema.Entity, schema: Schema) throws {
        variable = predicate.variable.key
        var parts: [any PredicateExpression] = []
        Self.split(predicate.expression, into: &parts)
        var conjuncts: [Conjunct] = []
        for part in parts {
            var translator = PredicateTranslator(schema: schema, entity: entity)
            translator.bindRoot(predicate.variable.key)
            let term = try translator.term(part)
            var filter: StoreFilter?
            if let (condition, scope) = translator.condition(term), scope == nil || scope == 0 { filter = condition }
            conjuncts.append(
                Conjunct(
                    expression: part, filter: filter, mayThrow: filter == nil && PredicateInspection.mayThrow(part),
                    reachedEntities: translator.reachedEntities.subtracting([entity.name]),
                    opaqueReason: filter == nil ? translator.opaqueReason : nil))
        }
        self.conjuncts = conjuncts
    }

    private static func split(_ expression: any PredicateExpression, into parts: inout [any PredicateExpression]) {
        if let conjunction = expression as? any ConjunctionExpression {
            split(conjunction.leftOperand, into: &parts)
            split(conjunction.rightOperand, into: &parts)
        } else {
            parts.append(expression)
        }
    }
}

/// A top-level `&&` node, so the translator can split it.
protocol ConjunctionExpression {
    var leftOperand: any PredicateExpression { get }
    var rightOperand: any PredicateExpression { get }
}

/// Structural questions about expression trees, answered through ``TranslatableExpression``.
enum PredicateInspection {
    /// Whether evaluating the expression may throw; unknown node types may.
    static func mayThrow(_ expression: any PredicateExpression) -> Bool {
        guard let node = expression as? any TranslatableExpression else { return true }
        return node.canThrowItself || node.operands.contains(where: mayThrow)
            || node.closureBodies.contains(where: mayThrow)
    }
}
