import SwiftSyntax
import SwiftSyntaxBuilder

/// The storage of one property and its accessors.
struct PropertyStorage {
    let property: ModelProperty

    init(_ property: ModelProperty) { self.property = property }

    /// `ModelStore.Attribute<String>`, `ModelStore.Relationship<[Item]>` or `ModelStore.Transient<Bool>`.
    var storageType: String {
        let wrapper =
            switch property.kind {
            case .attribute: "Attribute"
            case .relationship: "Relationship"
            case .transient: "Transient"
            }
        return "ModelStore.\(wrapper)<\(property.type.trimmedDescription)>"
    }

    /// The storage's declaration: no initial value; the init accessor sets it.
    func declaration() -> DeclSyntax {
        "private var \(raw: property.storageName): \(raw: storageType)"
    }

    /// A new storage holding `value`, with the arguments the declaration's attribute gave.
    func makeStorage(_ value: String) -> String {
        var arguments = ["wrappedValue: \(value)"]
        let given = Array(property.arguments ?? [])
        switch property.kind {
        case .attribute:
            let options = given.filter { $0.label == nil }.map(\.expression.trimmedDescription)
            if !options.isEmpty { arguments.append("[\(options.joined(separator: ", "))]") }
            if let originalName = given.first(where: { $0.label?.text == "originalName" }) {
                arguments.append("originalName: \(originalName.expression.trimmedDescription)")
            }
        case .relationship:
            // SwiftData's arguments, in SwiftData's order, which is the wrapper's; its hash modifier
            // only versions SwiftData's own schemas.
            for argument in given {
                guard let label = argument.label?.text, label != "hashModifier" else { continue }
                arguments.append("\(label): \(argument.expression.trimmedDescription)")
            }
        case .transient:
            break
        }
        return "\(storageType)(\(arguments.joined(separator: ", ")))"
    }

    func accessors() -> [AccessorDeclSyntax] {
        let name = property.name
        let storage = property.storageName
        let type = property.type.trimmedDescription
        let subscriptCall = "\(storageType)[_enclosingInstance: self, wrapped: \\.\(name), storage: \\.\(storage)]"
        let initAccessor: AccessorDeclSyntax
        switch property.kind {
        case .attribute:
            initAccessor = """
                @storageRestrictions(initializes: \(raw: storage))
                init(initialValue) {
                    ModelStoreMacros._ModelStorageCheck.attribute(\(raw: type).self)
                    \(raw: storage) = \(raw: makeStorage("initialValue"))
                }
                """
        case .relationship:
            initAccessor = """
                @storageRestrictions(initializes: \(raw: storage), accesses: _$relationshipsToLink)
                init(initialValue) {
                    ModelStoreMacros._ModelStorageCheck.relationship(\(raw: type).self)
                    \(raw: storage) = \(raw: makeStorage("initialValue"))
                    if !initialValue.relatedModels.isEmpty {
                        _$relationshipsToLink.append { model in
                            model.\(raw: storage) = \(raw: makeStorage(".init(relatedModels: [])"))
                            model.\(raw: name) = initialValue
                        }
                    }
                }
                """
        case .transient:
            initAccessor = """
                @storageRestrictions(initializes: \(raw: storage))
                init(initialValue) {
                    \(raw: storage) = \(raw: makeStorage("initialValue"))
                }
                """
        }
        return [
            initAccessor,
            "get { \(raw: subscriptCall) }",
            "set { \(raw: subscriptCall) = newValue }",
        ]
    }
}
