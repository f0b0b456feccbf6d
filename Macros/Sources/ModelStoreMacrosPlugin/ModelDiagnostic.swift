import SwiftDiagnostics
import SwiftSyntax

/// The errors the macros report: each says what is wrong, on what, and how to fix it.
enum ModelDiagnostic {
    case notAClass(kind: String)
    case constraintInSubclass(String, String)
    case letProperty
    case lazyProperty
    case severalBindings
    case missingType(String)
    case unstorableType(String, String, String)
    case relationshipShape(String, String)
    case relationshipToValue(String, String)
    case inverseWithoutRoot(String, String)
    case inverseNotAProperty(String, String)
    case inverseOnOtherType(String, String, String, String)
    case markerOutsideModel(String)
    case constraintWithoutType(String)
    case constraintArgument(String)
    case modelActorOnNonActor
    case genericModel(String)
    case uniqueToMany(String, String)
    case uniqueRelationshipInSubclass(String, String)

    var message: String {
        switch self {
        case .notAClass(let kind):
            "'@Model' applies to classes, and this is \("aeiou".contains(kind.first ?? "x") ? "an" : "a") \(kind): "
                + "declare the model as a 'final class'"
        case .constraintInSubclass(let macro, let name):
            "'#\(macro)' in '@Model' subclass '\(name)' is not supported: a hierarchy's constraints belong to its "
                + "root class; declare '#\(macro)' in the root '@Model' class"
        case .letProperty:
            "'@Model' cannot store a 'let' property: make it a 'var', or a computed property if it is derived"
        case .lazyProperty:
            "'@Model' cannot store a 'lazy' property: make it a stored 'var' with an initial value, or computed"
        case .severalBindings:
            "'@Model' stores one property per declaration: declare each property on a line of its own"
        case .missingType(let name):
            "'@Model' needs the type of '\(name)' written out (it declares the property's storage from it): "
                + "add ': Type' after the name"
        case .unstorableType(let name, let type, let reason):
            "'\(name)' is of type '\(type)' and \(reason): mark it '@Transient', or store a Codable value instead"
        case .relationshipShape(let name, let type):
            "'@Relationship' property '\(name)' is of type '\(type)': a relationship is an optional model "
                + "('Trip?') or an array of models ('[Trip]')"
        case .relationshipToValue(let name, let type):
            "'@Relationship' property '\(name)' holds '\(type)' values, which are not models: "
                + "remove '@Relationship' to store them as an attribute"
        case .inverseWithoutRoot(let name, let type):
            "the inverse of '\(name)' must name its model type: write '\\\(type).property'"
        case .inverseNotAProperty(let name, let keyPath):
            "the inverse of '\(name)', '\(keyPath)', must be a single property of the related model"
        case .inverseOnOtherType(let name, let keyPath, let root, let destination):
            "the inverse of '\(name)', '\(keyPath)', is a property of '\(root)', but '\(name)' holds "
                + "'\(destination)' models: name a relationship of '\(destination)' that points back"
        case .markerOutsideModel(let attribute):
            "'@\(attribute)' only works on a property of a '@Model' class: add '@Model' to the class"
        case .constraintWithoutType(let macro):
            "'#\(macro)' needs the model type: write '#\(macro)<Trip>([\\.name])'"
        case .constraintArgument(let macro):
            "the arguments of '#\(macro)' are arrays of key paths of the model, such as '[\\.name, \\.start]'"
        case .modelActorOnNonActor:
            "'@ModelActor' applies to actors: declare the type as an 'actor'"
        case .genericModel(let name):
            "'@Model' class '\(name)' cannot be generic: a model class is one entity of the schema, with one "
                + "stored type per property; declare a model class per type ('final class Int\(name)'), or give "
                + "the property a Codable type that covers every case (an enum with a case per type)"
        case .uniqueToMany(let name, let type):
            "'.unique' applies to a to-one relationship, and '\(name)' is of type '\(type)': uniqueness compares "
                + "one related model ('Trip?'); remove '.unique', or declare '#Unique' on the related model's "
                + "inverse to-one relationship"
        case .uniqueRelationshipInSubclass(let name, let type):
            "'.unique' on relationship '\(name)' of '@Model' subclass '\(type)' is not supported: a hierarchy's "
                + "uniqueness constraints are its root class's, over the root's properties; declare '\(name)' in "
                + "the root class, or remove '.unique'"
        }
    }

    /// The diagnostic at `node`, with fix-its.
    func diagnose(at node: some SyntaxProtocol, fixIts: [FixIt] = []) -> Diagnostic {
        Diagnostic(node: Syntax(node), message: ModelDiagnosticMessage(message: message, id: id), fixIts: fixIts)
    }

    private var id: String {
        switch self {
        case .notAClass: "notAClass"
        case .constraintInSubclass: "constraintInSubclass"
        case .letProperty: "letProperty"
        case .lazyProperty: "lazyProperty"
        case .severalBindings: "severalBindings"
        case .missingType: "missingType"
        case .unstorableType: "unstorableType"
        case .relationshipShape: "relationshipShape"
        case .relationshipToValue: "relationshipToValue"
        case .inverseWithoutRoot: "inverseWithoutRoot"
        case .inverseNotAProperty: "inverseNotAProperty"
        case .inverseOnOtherType: "inverseOnOtherType"
        case .markerOutsideModel: "markerOutsideModel"
        case .constraintWithoutType: "constraintWithoutType"
        case .constraintArgument: "constraintArgument"
        case .modelActorOnNonActor: "modelActorOnNonActor"
        case .genericModel: "genericModel"
        case .uniqueToMany: "uniqueToMany"
        case .uniqueRelationshipInSubclass: "uniqueRelationshipInSubclass"
        }
    }

    /// A fix-it that removes `attribute` from its declaration.
    static func removeAttributeFixIt(_ attribute: AttributeSyntax) -> FixIt {
        FixIt(
            message: ModelFixIt("remove '\(attribute.trimmedDescription)'"),
            changes: [
                .replace(
                    oldNode: Syntax(attribute),
                    newNode: Syntax(TokenSyntax.identifier("", leadingTrivia: attribute.leadingTrivia)))
            ])
    }
}

/// An error of the macros.
struct ModelDiagnosticMessage: DiagnosticMessage {
    let message: String
    let id: String
    var diagnosticID: MessageID { MessageID(domain: "ModelStoreMacros", id: id) }
    var severity: DiagnosticSeverity { .error }
}

/// A fix-it's title.
struct ModelFixIt: FixItMessage {
    let message: String
    init(_ message: String) { self.message = message }
    var fixItID: MessageID { MessageID(domain: "ModelStoreMacros", id: message) }
}

/// Thrown by a macro that reported its own diagnostics, so the expansion stops without another.
struct DiagnosticsReported: Error {}
