import SwiftSyntax

/// Rewrites `self.name` to `name` in the body of `name`'s own observer, so that the local variable
/// the generated setter declares there, which stores without calling the observers, receives every
/// read and write of the property the observer makes.
final class OwnPropertyReferences: SyntaxRewriter {
    private let name: String

    init(_ name: String) {
        self.name = name
        super.init(viewMode: .sourceAccurate)
    }

    override func visit(_ node: MemberAccessExprSyntax) -> ExprSyntax {
        guard let base = node.base?.as(DeclReferenceExprSyntax.self), base.baseName.tokenKind == .keyword(.self),
            node.declName.baseName.text == name, node.declName.argumentNames == nil
        else { return super.visit(node) }
        let reference = DeclReferenceExprSyntax(baseName: .identifier(name))
        return ExprSyntax(
            reference.with(\.leadingTrivia, node.leadingTrivia).with(\.trailingTrivia, node.trailingTrivia))
    }

    /// Whether `syntax` refers to `name` on its own (not as a member of something else).
    static func mentions(_ name: String, in syntax: some SyntaxProtocol) -> Bool {
        syntax.tokens(viewMode: .sourceAccurate).contains { token in
            guard token.tokenKind == .identifier(name), let reference = token.parent?.as(DeclReferenceExprSyntax.self)
            else { return false }
            return reference.parent?.as(MemberAccessExprSyntax.self)?.declName.id != reference.id
        }
    }
}
