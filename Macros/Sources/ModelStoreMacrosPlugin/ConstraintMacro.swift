import SwiftSyntax
import SwiftSyntaxMacros

/// `#Unique<Trip>([\.name, \.start])` and `#Index<Trip>([\.start])`: they expand to nothing;
/// `@Model` turns them into the model's `constraints`.
public struct ConstraintMacro: DeclarationMacro {
    /// Reports a `#Unique` or `#Index` without a model type or with arguments that are not key path arrays; adds nothing.
    public static func expansion(
        of node: some FreestandingMacroExpansionSyntax, in context: some MacroExpansionContext
    ) throws -> [DeclSyntax] {
        let macro = node.macroName.text
        if node.genericArgumentClause == nil {
            context.diagnose(ModelDiagnostic.constraintWithoutType(macro).diagnose(at: node))
        }
        for argument in node.arguments where keyPaths(argument.expression) == nil {
            context.diagnose(ModelDiagnostic.constraintArgument(macro).diagnose(at: argument))
        }
        return []
    }

    /// The key paths of one argument, an array literal of key path literals; `nil` for anything else.
    private static func keyPaths(_ expression: ExprSyntax) -> [String]? {
        guard let array = expression.as(ArrayExprSyntax.self), !array.elements.isEmpty else { return nil }
        let paths = array.elements.compactMap { $0.expression.as(KeyPathExprSyntax.self)?.trimmedDescription }
        return paths.count == array.elements.count ? paths : nil
    }

    /// The `ModelConstraint`s that the `#Unique` and `#Index` among `members` declare, as expressions.
    static func constraints(in members: MemberBlockItemListSyntax) -> [String] {
        var result: [String] = []
        for member in members {
            guard let expansion = member.decl.as(MacroExpansionDeclSyntax.self) else { continue }
            let kind: String
            switch expansion.macroName.text {
            case "Unique": kind = "unique"
            case "Index": kind = "index"
            default: continue
            }
            for argument in expansion.arguments {
                guard let paths = keyPaths(argument.expression) else { continue }
                result.append(".\(kind)(\(paths.joined(separator: ", ")))")
            }
        }
        return result
    }
}
