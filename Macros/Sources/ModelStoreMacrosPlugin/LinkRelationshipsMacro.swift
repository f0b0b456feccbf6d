import SwiftSyntax
import SwiftSyntaxMacros

/// `@_LinkRelationshipsOnReturn`, which `@Model` puts on each initializer that can take it (see
/// `appliesTo(_:)`): links the relationships the initializer set to their inverses as it returns.
///
/// An initializer's first assignment to a property runs the property's init accessor, before the
/// model exists as `self`, so nothing can reach the related model's inverse then: the accessor keeps
/// the relationship to link. The body becomes the initializer's own statements after
/// `defer { _ = self.persistentBackingData }`, which reads the backing data as the initializer
/// returns and so links what was kept: right after `Student(school: school)`, `school.students`
/// contains the student, as in SwiftData. (A preamble macro would leave the body as written, but
/// preamble macros are an experimental feature of the compiler.)
public struct LinkRelationshipsMacro: BodyMacro {
    /// The initializer's statements, after the `defer` that reads the backing data as it returns.
    public static func expansion(
        of node: AttributeSyntax, providingBodyFor declaration: some DeclSyntaxProtocol & WithOptionalCodeBlockSyntax,
        in context: some MacroExpansionContext
    ) throws -> [CodeBlockItemSyntax] {
        guard let body = declaration.body else { return [] }
        return ["defer { _ = self.persistentBackingData }"] + Array(body.statements)
    }

    /// Whether the macro applies to `initializer`, given the names of the class's own properties that may
    /// be relationships: a designated initializer that cannot fail, whose every return therefore finds
    /// `self` whole, and that names one of them (an initializer that sets none has nothing to link, and
    /// keeps its body as written, where the compiler reports errors in it at their own lines).
    ///
    /// A `defer` that reads `self` in an initializer that returns `nil` or throws is a build error
    /// whenever that happens before every property has its value, so those initializers leave the
    /// relationships to be linked when the model is first used. A convenience initializer calls a
    /// designated one, which links.
    static func appliesTo(_ initializer: InitializerDeclSyntax, relationships: Set<String>) -> Bool {
        guard let body = initializer.body, initializer.optionalMark == nil,
            initializer.signature.effectSpecifiers?.throwsClause == nil,
            !initializer.modifiers.contains(where: { $0.name.tokenKind == .keyword(.convenience) })
        else { return false }
        return body.tokens(viewMode: .sourceAccurate).contains {
            if case .identifier(let name) = $0.tokenKind { return relationships.contains(name) }
            return false
        }
    }
}
