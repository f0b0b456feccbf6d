import SwiftDiagnostics
import SwiftSyntax
import SwiftSyntaxBuilder
import SwiftSyntaxMacros

/// A `@Model` class as the macro reads it.
struct ModelClass {
    let name: String
    /// `public ` or `package ` when the class is, so the members the protocol requires are too.
    let access: String
    let properties: [ModelProperty]
    /// The class's modifiers, as token kinds.
    let modifiers: [TokenKind]
    let members: MemberBlockItemListSyntax
    /// The enums and structs declared inside the class: values, never models.
    let valueTypes: Set<String>
    /// Whether every stored property can be kept. When one cannot, the macro adds nothing, so that its
    /// diagnostics are the only errors.
    let isValid: Bool
    /// Whether the class is `final`: a class that can have subclasses gets a `required init()` and a hook
    /// its subclasses' relationships are linked through.
    let isFinal: Bool
    /// The model class the class inherits from, if any.
    enum Superclass {
        /// None: the class is the root of its hierarchy.
        case none
        /// A `@Model` class, whose `persistentBackingData` links the relationships a subclass's
        /// initializers set.
        case macroModel
        /// A hand-written model class (`class Trip: PersistentModel`), which has no such hook.
        case handWrittenModel
    }

    /// The model class the class inherits from: a subclass adds only its own properties' storage.
    let superclass: Superclass
    /// Whether the class is a subclass of a model class.
    var inheritsModel: Bool { superclass != .none }

    var hasRelationships: Bool { properties.contains(where: \.mayBeRelationship) }

    /// `nil` when the declaration is not a class `@Model` can expand (reported when `report` is set).
    init?(
        _ declaration: some DeclGroupSyntax, attribute: AttributeSyntax, context: some MacroExpansionContext,
        report: Bool, superclass: Superclass = .none
    ) {
        guard let type = declaration.as(ClassDeclSyntax.self) else {
            if report { context.diagnose(Self.notAClass(declaration)) }
            return nil
        }
        let modifiers = type.modifiers.map(\.name.tokenKind)
        isFinal = modifiers.contains(.keyword(.final))
        self.superclass = superclass
        if let generics = type.genericParameterClause {
            if report { context.diagnose(ModelDiagnostic.genericModel(type.name.text).diagnose(at: generics)) }
            return nil
        }
        name = type.name.text
        self.modifiers = modifiers
        access =
            modifiers.contains(.keyword(.public)) || modifiers.contains(.keyword(.open))
            ? "public " : modifiers.contains(.keyword(.package)) ? "package " : ""
        members = type.memberBlock.members
        valueTypes = Set(
            members.compactMap {
                $0.decl.as(EnumDeclSyntax.self)?.name.text ?? $0.decl.as(StructDeclSyntax.self)?.name.text
            })
        var properties: [ModelProperty] = []
        var isValid = true
        for member in type.memberBlock.members {
            switch ModelPropertyReader.read(member.decl, valueTypes: valueTypes) {
            case .ignored: break
            case .property(let property): properties.append(property)
            case .invalid(let diagnostics):
                isValid = false
                if report { diagnostics.forEach(context.diagnose) }
            }
        }
        if superclass != .none {
            for property in properties where property.isUniqueRelationship {
                isValid = false
                if report, let unique = property.arguments?.first(where: { $0.label == nil }) {
                    context.diagnose(
                        ModelDiagnostic.uniqueRelationshipInSubclass(property.name, name).diagnose(
                            at: unique.expression))
                }
            }
            for member in members {
                guard let expansion = member.decl.as(MacroExpansionDeclSyntax.self),
                    ["Unique", "Index"].contains(expansion.macroName.text)
                else { continue }
                isValid = false
                if report {
                    context.diagnose(
                        ModelDiagnostic.constraintInSubclass(expansion.macroName.text, name).diagnose(at: expansion))
                }
            }
        }
        self.properties = properties
        self.isValid = isValid
    }

    /// The model class a class that `@Model` sees inherits from. The compiler gives the macro the
    /// conformances the class does not have yet (`protocols`). `_MacroModel`, which `@Model` adds to
    /// each root class, is missing only from classes that do not inherit a `@Model` class. Of those, a
    /// class that already conforms to `PersistentModel` without naming it in its inheritance clause
    /// inherits a hand-written model class; one that names it, or lacks the conformance, is a root.
    /// (A root that conforms through a protocol of the app's names `PersistentModel` too.) A guess
    /// that is wrong is a compiler error, not a silent model: a subclass taken for a root redeclares
    /// `persistentBackingData`, and a root taken for a subclass lacks it.
    static func superclass(protocols: [TypeSyntax], of declaration: some DeclGroupSyntax) -> Superclass {
        let missing = Set(protocols.map { TypeNames.baseName($0) })
        guard missing.contains("_MacroModel") else { return .macroModel }
        guard !missing.contains("PersistentModel"), let inherited = declaration.inheritanceClause?.inheritedTypes,
            !inherited.contains(where: { TypeNames.baseName($0.type) == "PersistentModel" })
        else { return .none }
        return .handWrittenModel
    }

    /// The conformances the extension adds: `PersistentModel` with `RelationshipContent` (which it
    /// implies, named so that relationships to the class type-check in expansions the compiler checks
    /// before it has seen the implied conformance), and `_MacroModel`, of those the class lacks.
    /// A subclass of a hand-written model class gets `_MacroModel` too (an extension macro that adds
    /// none of the conformances it was asked for crashes the 6.3 compiler once the class has a
    /// subclass). So a `@Model` subclass of that class is taken for a subclass of a `@Model` class;
    /// with relationships of its own, its build fails, as its override of
    /// `_$linkSubclassRelationships()` overrides nothing, rather than leave them unlinked.
    static func extensionConformances(protocols: [TypeSyntax], of declaration: some DeclGroupSyntax) -> [String] {
        let names = Set(protocols.map { TypeNames.baseName($0) })
        var result: [String] = []
        if names.contains("PersistentModel") {
            result += ["ModelStore.PersistentModel", "ModelStore.RelationshipContent"]
        }
        if names.contains("_MacroModel") { result.append("ModelStoreMacros._MacroModel") }
        return result
    }

    private static func notAClass(_ declaration: some DeclGroupSyntax) -> Diagnostic {
        if let structure = declaration.as(StructDeclSyntax.self) {
            let replacement = TokenSyntax.keyword(.class, leadingTrivia: structure.structKeyword.leadingTrivia)
            return ModelDiagnostic.notAClass(kind: "struct").diagnose(
                at: structure.structKeyword,
                fixIts: [
                    FixIt(
                        message: ModelFixIt("make it a 'final class'"),
                        changes: [
                            .replace(
                                oldNode: Syntax(structure.structKeyword),
                                newNode: Syntax(
                                    TokenSyntax.identifier(
                                        "final class", leadingTrivia: replacement.leadingTrivia,
                                        trailingTrivia: structure.structKeyword.trailingTrivia)))
                        ])
                ])
        }
        let kind =
            declaration.is(EnumDeclSyntax.self)
            ? "enum"
            : declaration.is(ActorDeclSyntax.self)
                ? "actor"
                : declaration.is(ProtocolDeclSyntax.self)
                    ? "protocol" : "extension"
        return ModelDiagnostic.notAClass(kind: kind).diagnose(at: declaration.introducer)
    }

    /// The members the expansion adds.
    func generatedMembers() -> [DeclSyntax] {
        var result = inheritsModel ? subclassLinkMembers() : isFinal ? finalRootMembers() : rootMembers()
        if needsInit {
            var lines: [String] = []
            for property in properties where property.initialValue == nil && !property.isOptional {
                if property.hasOptionalStorage {
                    let storage = PropertyStorage(property).makeStorage("nil", keyPath: "\\\(name).\(property.name)")
                    lines.append("self.\(property.storageName) = \(storage)")
                } else if let value = Placeholder.literal(for: property.type) {
                    lines.append("self.\(property.name) = \(value)")
                } else {
                    let storage = "_$placeholder_\(property.name)"
                    result.append(
                        """
                        private static let \(raw: storage) = ModelStoreMacros._ModelPlaceholder<\(property.type)>(\
                        model: \(literal: name), property: \(literal: property.name))
                        """)
                    lines.append("self.\(property.name) = Self.\(storage).value")
                }
            }
            if inheritsModel { lines.append("super.init()") }
            result.append(
                """
                /// Creates a model for the framework to load stored values into; each property without an
                /// initial value starts as a placeholder.
                \(raw: access)\(raw: isFinal && !inheritsModel ? "" : "required ")init() {
                \(raw: lines.joined(separator: "\n"))
                }
                """)
        }
        let constraints =
            ConstraintMacro.constraints(in: members)
            + properties.filter(\.isUniqueRelationship).map { ".unique(\\.\($0.name))" }
        if !constraints.isEmpty && !inheritsModel {
            result.append(
                """
                /// The model's compound uniqueness constraints and indexes, from its `#Unique` and `#Index`.
                \(raw: access)static var constraints: [ModelStore.ModelConstraint<\(raw: name)>] {
                    [\(raw: constraints.joined(separator: ", "))]
                }
                """)
        }
        if !inheritsModel {
            // ModelStoreMacros declares the alias for every model and for every `Codable` type; this
            // one takes precedence over both, so a `Codable` model is still related to, not encoded.
            result.append(
                """
                /// The storage of an unmarked optional or array of this model in a model: a relationship.
                \(raw: access)typealias _ModelStoreStorage<Value: ModelStore.RelationshipValue> = ModelStore.Relationship<Value>
                """)
        }
        return result
    }

    /// Whether the expansion adds `init()`. A root class always needs the one the framework makes models
    /// with. A subclass that declares no designated initializer and gives every property an initial
    /// value inherits it, with its superclass's other initializers, so it gets none.
    private var needsInit: Bool {
        guard !declaresInitWithoutArguments else { return false }
        guard inheritsModel else { return true }
        let declaresDesignatedInit = members.contains { member in
            guard let initializer = member.decl.as(InitializerDeclSyntax.self) else { return false }
            return !initializer.modifiers.contains { $0.name.tokenKind == .keyword(.convenience) }
        }
        return declaresDesignatedInit || properties.contains { $0.initialValue == nil && !$0.isOptional }
    }

    /// A final root's backing data, and the list of relationships its initializers set when it has some.
    private func finalRootMembers() -> [DeclSyntax] {
        guard hasRelationships else { return ["\(raw: access)let persistentBackingData = ModelStore.BackingData()"] }
        return [
            "private let _$backingData = ModelStore.BackingData()",
            """
            /// The framework's state for the model; reading it first links the relationships the
            /// class's initializer set.
            \(raw: access)var persistentBackingData: ModelStore.BackingData {
                if !_$relationshipsToLink.isEmpty { _$linkRelationships() }
                return _$backingData
            }
            """,
            linkList(),
            """
            /// Sets the relationships an initializer set once more, through their setters, which
            /// keep the inverse side of each related model in step.
            private func _$linkRelationships() {
                let links = _$relationshipsToLink
                _$relationshipsToLink = []
                for link in links { link(self) }
            }
            """,
        ]
    }

    /// A root that can have subclasses: its subclasses' initializers fill lists of their own, which
    /// the first read of `persistentBackingData` links through the overridable
    /// `_$linkSubclassRelationships()`.
    private func rootMembers() -> [DeclSyntax] {
        var result: [DeclSyntax] = [
            "private let _$backingData = ModelStore.BackingData()",
            """
            /// The framework's state for the model; reading it first links the relationships the
            /// initializers of the class and of its subclasses set.
            \(raw: access)var persistentBackingData: ModelStore.BackingData {
                if _$linksPending { _$linkRelationships() }
                return _$backingData
            }
            """,
            """
            /// Whether the relationships the initializers set are still to be linked.
            private var _$linksPending = true
            """,
        ]
        if hasRelationships { result.append(linkList()) }
        result.append(
            """
            /// Sets the relationships the initializers set once more, through their setters, which keep
            /// the inverse side of each related model in step: this class's, then each subclass's.
            private func _$linkRelationships() {
                _$linksPending = false
                \(raw: hasRelationships ? "let links = _$relationshipsToLink\n_$relationshipsToLink = []\nfor link in links { link(self) }\n" : "")_$linkSubclassRelationships()
            }
            """)
        result.append(
            """
            /// Links the relationships a subclass's initializers set; each `@Model` subclass with
            /// relationships overrides it.
            \(raw: modifiers.contains(.keyword(.open)) ? "open " : "")func _$linkSubclassRelationships() {}
            """)
        result.append(
            """
            /// The list in which a subclass keeps the relationships its initializers set, for this class to link.
            \(raw: access)typealias _$RelationshipLinks<Model> = [(Model) -> Void]
            """)
        return result
    }

    /// A subclass's list of the relationships its initializers set, and the override that links them.
    ///
    /// The list's type is `_$RelationshipLinks`, which the hierarchy's first `@Model` class declares. A
    /// `@Model` root links the lists from its `persistentBackingData`. A hand-written root has no such
    /// step, so a `@Model` subclass of one declares the type as `_UnlinkedRelationships`, which stops the
    /// program when a relationship is set before `super.init()` (set after it, the setter links it), and
    /// the hook its own `@Model` subclasses override: their expansion is the same either way.
    private func subclassLinkMembers() -> [DeclSyntax] {
        var result: [DeclSyntax] = []
        if superclass == .handWrittenModel {
            result += [
                """
                /// The list in which a subclass keeps the relationships its initializers set: nothing links
                /// them under a hand-written root class, so setting one before `super.init()` stops the program.
                \(raw: access)typealias _$RelationshipLinks<Model> = ModelStoreMacros._UnlinkedRelationships<Model>
                """,
                """
                /// The hook a `@Model` subclass overrides; a hand-written root never calls it.
                \(raw: modifiers.contains(.keyword(.open)) ? "open " : "")func _$linkSubclassRelationships() {}
                """,
            ]
        }
        guard hasRelationships else { return result }
        result.append(
            """
            /// What the class's initializers set in relationships, to link to the inverses.
            private var _$relationshipsToLink = _$RelationshipLinks<\(raw: name)>()
            """)
        if superclass == .handWrittenModel { return result }
        result.append(
            """
            /// Links the relationships this class's initializers set, after its superclasses' ones.
            \(raw: modifiers.contains(.keyword(.open)) ? "open " : access)override func _$linkSubclassRelationships() {
                super._$linkSubclassRelationships()
                let links = _$relationshipsToLink
                _$relationshipsToLink = []
                for link in links { link(self) }
            }
            """)
        return result
    }

    private func linkList() -> DeclSyntax {
        """
        /// What the class's initializers set in relationships, to link to the inverses.
        private var _$relationshipsToLink: [(\(raw: name)) -> Void] = []
        """
    }

    /// Whether the class declares an `init()` of its own, which the framework then uses.
    private var declaresInitWithoutArguments: Bool {
        members.contains { member in
            guard let initializer = member.decl.as(InitializerDeclSyntax.self) else { return false }
            return initializer.signature.parameterClause.parameters.isEmpty && initializer.optionalMark == nil
        }
    }
}
