import ModelStore

/// The class hierarchy an entity stores, as its recorded schema describes it: which class each model
/// is of, which properties a class has (its own and those it inherits), and the filter that selects a
/// class with its subclasses.
struct ClassHierarchy {
    let entity: Schema.Entity
    /// The attribute that records each model's class.
    let classAttribute: Schema.Attribute
    /// The classes, root first, parents before children.
    let classes: [Schema.Entity.ModelClass]

    /// The hierarchy of an entity, or `nil` for an entity of one class.
    init?(_ entity: Schema.Entity) {
        guard let classAttribute = entity.classAttribute, !entity.classes.isEmpty else { return nil }
        self.entity = entity
        self.classAttribute = classAttribute
        classes = entity.classes
    }

    /// The class named `name`, if the entity stores it.
    func modelClass(named name: String) -> Schema.Entity.ModelClass? {
        classes.first { $0.name == name }
    }

    /// The class a model is of, as its class attribute records it.
    func className(of snapshot: DefaultSnapshot) -> String? {
        guard classAttribute.slot < snapshot.values.count, case .string(let name) = snapshot.values[classAttribute.slot]
        else { return nil }
        return name
    }

    /// A class and its superclasses, the class first and the root last.
    func lineage(of name: String) -> [Schema.Entity.ModelClass] {
        var chain: [Schema.Entity.ModelClass] = []
        var next: String? = name
        while let current = next, let found = modelClass(named: current), !chain.contains(found) {
            chain.append(found)
            next = found.superclassName
        }
        return chain
    }

    /// The classes whose superclass is `name` (the root classes for `nil`), in the schema's order.
    func subclasses(of name: String?) -> [Schema.Entity.ModelClass] {
        classes.filter { $0.superclassName == name }
    }

    /// Whether a model of class `name` has a property: one its class or a superclass declares, or the
    /// class attribute. Every property counts for a class the entity does not know.
    func has(_ property: Schema.Property, inClass name: String) -> Bool {
        if property.name == classAttribute.name { return true }
        let chain = lineage(of: name)
        guard !chain.isEmpty else { return true }
        return chain.contains { $0.ownPropertyNames.contains(property.name) }
    }

    /// The condition that a model is of class `name` or one of its subclasses; throws
    /// ``StudioError/Kind/badRequest`` naming the classes for a class the entity does not store.
    func filter(forClass name: String) throws -> StoreFilter {
        guard modelClass(named: name) != nil else {
            throw StudioError(
                .badRequest, "'\(entity.name)' stores no class '\(name)'",
                remedy: "Its classes are " + classes.map { "'\($0.name)'" }.joined(separator: ", "))
        }
        return .isIn(
            StorePath(classAttribute.name), entity.classNames(inheritingFrom: name).map { StoreValue.string($0) })
    }

    /// The classes as a nested list, each a link that `link` makes for its name, the class `current`
    /// marked, and abstract classes in italics.
    func tree(current: String?, link: (String) -> String) -> String {
        func items(under parent: String?) -> String {
            let children = subclasses(of: parent)
            guard !children.isEmpty else { return "" }
            return "<ul>"
                + children.map { modelClass in
                    let name = HTML.escape(modelClass.name)
                    let label = modelClass.isAbstract ? "<i>\(name)</i> <span class=\"muted\">abstract</span>" : name
                    let mark = modelClass.name == current ? " class=\"current\"" : ""
                    return "<li><a\(mark) data-class=\"\(name)\" href=\"\(link(modelClass.name))\">\(label)</a>"
                        + items(under: modelClass.name) + "</li>"
                }.joined() + "</ul>"
        }
        return items(under: nil)
    }
}
