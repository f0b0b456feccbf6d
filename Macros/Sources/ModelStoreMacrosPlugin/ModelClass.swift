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
    let members: MemberBlockItemListSyntax
    /// The enums and structs declared inside the class: values, never models.
    let valueTypes: Set<String>
    /// Whether every stored property can be kept. When one cannot, the macro adds nothing, so that its
    /// diagnostics are the only errors.
    let isValid: Bool

    var hasRelationships: Bool { properties.contains { $0.kind == .relationship } }

    /// `nil` when the declaration is not a class `@Model` can expand (reported when `report` is set).
    init?(
        _ declaration: some DeclGroupSyntax, attribute: AttributeSyntax, context: some MacroExpansionContext,
        report: Bool
    ) {
        guard let type = declaration.as(ClassDeclSyntax.self) else {
            if report { context.diagnose(Self.notAClass(declaration)) }
            return nil
        }
        let modifiers = type.modifiers.map(\.name.tokenKind)
        guard modifiers.contains(.keyword(.final)) else {
            if report {
                let keyword = type.classKeyword
                let finalClass = TokenSyntax.identifier(
                    "final class", leadingTrivia: keyword.leadingTrivia, trailingTrivia: keyword.trailingTrivia)
                context.diagnose(
                    ModelDiagnostic.notFinal(type.name.text).diagnose(
                        at: keyword,
                        fixIts: [
                            FixIt(
                                message: ModelFixIt("add 'final'"),
                                changes: [.replace(oldNode: Syntax(keyword), newNode: Syntax(finalClass))])
                        ]))
            }
            return nil
        }
        if let generics = type.genericParameterClause {
            if report { context.diagnose(ModelDiagnostic.genericModel(type.name.text).diagnose(at: generics)) }
            return nil
        }
        name = type.name.text
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
        self.properties = properties
        self.isValid = isValid
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
        var result: [DeclSyntax] = []
        if hasRelationships {
            result.append(
                """
                private let _$backingData = ModelStore.BackingData()
                """)
            result.append(
                """
                /// The framework's state for the model; reading it first links the relationships the
                /// class's initializer set.
                \(raw: access)var persistentBackingData: ModelStore.BackingData {
                    if !_$relationshipsToLink.isEmpty { _$linkRelationships() }
                    return _$backingData
                }
                """)
            result.append(
                """
                /// What the class's initializers set in relationships, to link to the inverses.
                private var _$relationshipsToLink: [(\(raw: name)) -> Void] = []
                """)
            result.append(
                """
                /// Sets the relationships an initializer set once more, through their setters, which
                /// keep the inverse side of each related model in step.
                private func _$linkRelationships() {
                    let links = _$relationshipsToLink
                    _$relationshipsToLink = []
                    for link in links { link(self) }
                }
                """)
        } else {
            result.append("\(raw: access)let persistentBackingData = ModelStore.BackingData()")
        }
        if !declaresInitWithoutArguments {
            var lines: [String] = []
            for property in properties where property.initialValue == nil && !property.isOptional {
                if let value = Placeholder.literal(for: property.type) {
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
            result.append(
                """
                /// Creates a model for the framework to load stored values into; each property without an
                /// initial value starts as a placeholder.
                \(raw: access)init() {
                \(raw: lines.joined(separator: "\n"))
                }
                """)
        }
        let constraints = ConstraintMacro.constraints(in: members)
        if !constraints.isEmpty {
            result.append(
                """
                /// The model's compound uniqueness constraints and indexes, from its `#Unique` and `#Index`.
                \(raw: access)static var constraints: [ModelStore.ModelConstraint<\(raw: name)>] {
                    [\(raw: constraints.joined(separator: ", "))]
                }
                """)
        }
        return result
    }

    /// Whether the class declares an `init()` of its own, which the framework then uses.
    private var declaresInitWithoutArguments: Bool {
        members.contains { member in
            guard let initializer = member.decl.as(InitializerDeclSyntax.self) else { return false }
            return initializer.signature.parameterClause.parameters.isEmpty && initializer.optionalMark == nil
        }
    }
}
