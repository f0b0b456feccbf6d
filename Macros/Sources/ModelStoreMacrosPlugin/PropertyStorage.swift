import SwiftSyntax
import SwiftSyntaxBuilder

/// The storage of one property and its accessors.
struct PropertyStorage {
    let property: ModelProperty

    init(_ property: ModelProperty) { self.property = property }

    /// `ModelStore.Attribute<String>`, `ModelStore.Relationship<[Item]>`, `ModelStore.Transient<Bool>`,
    /// or `Stop._ModelStoreStorage<[Stop]>` for an unmarked `[Stop]`, which the compiler resolves to one
    /// of the first two by what `Stop` is.
    var storageType: String {
        let type = property.type.trimmedDescription
        switch property.kind {
        case .attribute where property.hasOptionalStorage: return "ModelStore.Attribute<\(type)?>"
        case .attribute: return "ModelStore.Attribute<\(type)>"
        case .relationship: return "ModelStore.Relationship<\(type)>"
        case .transient: return "ModelStore.Transient<\(type)>"
        case .inferred:
            let destination = TypeNames.relationshipDestination(property.type)?.trimmedDescription ?? type
            return "\(destination)._ModelStoreStorage<\(type)>"
        }
    }

    /// The storage's declaration: no initial value; the init accessor sets it. It is `final`, as a
    /// property wrapper's storage is, so that a key path to it is a stored property's, whose
    /// description names the property, in a class that can have subclasses too.
    func declaration() -> DeclSyntax {
        "private final var \(raw: property.storageName): \(raw: storageType)"
    }

    /// A new storage holding `value`, with the arguments the declaration's attribute gave; `keyPath`, the
    /// property's own, goes to an optional storage (see `ModelProperty.hasOptionalStorage`).
    func makeStorage(_ value: String, keyPath: String? = nil) -> String {
        var arguments = ["\(property.hasOptionalStorage ? "_valueOrNone" : "wrappedValue"): \(value)"]
        let given = Array(property.arguments ?? [])
        switch property.kind {
        case .attribute:
            var options = given.filter { $0.label == nil }.map(\.expression.trimmedDescription)
            // `.transformable(by:)` names a value transformer, which the wrapper takes before the options.
            if let transformation = options.firstIndex(where: { $0.hasPrefix(".transformable(") }) {
                arguments.append(options.remove(at: transformation))
            }
            if !options.isEmpty { arguments.append("[\(options.joined(separator: ", "))]") }
            if let originalName = given.first(where: { $0.label?.text == "originalName" }) {
                arguments.append("originalName: \(originalName.expression.trimmedDescription)")
            }
            if let keyPath, property.hasOptionalStorage { arguments.append("keyPath: \(keyPath)") }
        case .relationship:
            // SwiftData's arguments, in SwiftData's order, which is the wrapper's; its hash modifier
            // only versions SwiftData's own schemas.
            for argument in given {
                guard let label = argument.label?.text, label != "hashModifier" else { continue }
                arguments.append("\(label): \(argument.expression.trimmedDescription)")
            }
        case .transient, .inferred:
            break
        }
        return "\(storageType)(\(arguments.joined(separator: ", ")))"
    }

    func accessors() -> [AccessorDeclSyntax] {
        let name = property.name
        let storage = property.storageName
        let type = property.type.trimmedDescription
        let wrapped = property.hasOptionalStorage ? "required" : "wrapped"
        let subscriptCall = "\(storageType)[_enclosingInstance: self, \(wrapped): \\.\(name), storage: \\.\(storage)]"
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
        case .inferred:
            // The same steps as a relationship's, through overloads that the compiler picks by the
            // type: for a value, `hasRelatedModels` is `false` and the closure is never made.
            initAccessor = """
                @storageRestrictions(initializes: \(raw: storage), accesses: _$relationshipsToLink)
                init(initialValue) {
                    \(raw: storage) = \(raw: makeStorage("initialValue"))
                    if ModelStoreMacros._InferredStorage.hasRelatedModels(initialValue) {
                        _$relationshipsToLink.append { model in
                            model.\(raw: storage) = \(raw: makeStorage("ModelStoreMacros._InferredStorage.unlinked(initialValue)"))
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
        return [initAccessor, "get { \(raw: subscriptCall) }", setter(subscriptCall)]
    }

    /// The setter: stores the new value, between the property's own `willSet` and `didSet` when it has
    /// them, as the compiler calls a stored property's observers: the old value is read first, and
    /// only when `didSet` uses it. Each observer becomes a local function, so a `return` in it ends
    /// only the observer; inside it, the property is a local variable over the same storage, so an
    /// observer that sets its own property (`didSet { name = name.trimmed() }`) stores the value
    /// without calling the observers again, as a stored property's observers do.
    private func setter(_ subscriptCall: String) -> AccessorDeclSyntax {
        guard property.willSet != nil || property.didSet != nil else {
            return "set { \(raw: subscriptCall) = newValue }"
        }
        let type = property.type.trimmedDescription
        var lines: [String] = []
        var calls: (before: [String], after: [String]) = ([], [])
        if let willSet = property.willSet, let body = willSet.body {
            let parameter = willSet.parameters?.name.text ?? "newValue"
            lines.append("func willSetObserver(_ \(parameter): \(type)) \(observerBody(body, subscriptCall))")
            calls.before.append("willSetObserver(newValue)")
        }
        if let didSet = property.didSet, let body = didSet.body {
            let parameter = didSet.parameters?.name.text
            let usesOldValue =
                parameter != nil
                || body.tokens(viewMode: .sourceAccurate).contains { $0.tokenKind == .identifier("oldValue") }
            if usesOldValue {
                lines.append(
                    "func didSetObserver(_ \(parameter ?? "oldValue"): \(type)) \(observerBody(body, subscriptCall))")
                calls.before.insert("let oldValue = \(subscriptCall)", at: 0)
                calls.after.append("didSetObserver(oldValue)")
            } else {
                lines.append("func didSetObserver() \(observerBody(body, subscriptCall))")
                calls.after.append("didSetObserver()")
            }
        }
        let statements = lines + calls.before + ["\(subscriptCall) = newValue"] + calls.after
        return """
            set {
            \(raw: statements.joined(separator: "\n"))
            }
            """
    }

    /// An observer's body as a block whose statements start at the first column, keeping their
    /// indentation relative to each other, so that the expansion indents them where they land;
    /// `self.name` becomes `name`, which a local variable declared first reads and writes.
    private func observerBody(_ body: CodeBlockSyntax, _ subscriptCall: String) -> String {
        let rewritten = OwnPropertyReferences(property.name).rewrite(body.statements)
        let lines = rewritten.description.split(separator: "\n", omittingEmptySubsequences: false)
            .drop { $0.allSatisfy(\.isWhitespace) }
        let indentation =
            lines.filter { !$0.allSatisfy(\.isWhitespace) }.map { $0.prefix { $0 == " " }.count }.min() ?? 0
        var statements = lines.map { $0.allSatisfy(\.isWhitespace) ? "" : String($0.dropFirst(indentation)) }
        if OwnPropertyReferences.mentions(property.name, in: rewritten) {
            statements.insert(
                """
                var \(property.name): \(property.type.trimmedDescription) {
                get { \(subscriptCall) }
                set { \(subscriptCall) = newValue }
                }
                """, at: 0)
        }
        return "{\n\(statements.joined(separator: "\n"))\n}"
    }
}
