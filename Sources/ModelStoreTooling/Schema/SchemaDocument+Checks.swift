import ModelStore

extension SchemaDocument {
    /// Checks what the fields alone cannot: unique names, destinations and inverses that exist
    /// and match, and constraints on stored properties. Throws the first problem, with its path.
    package func check(_ problems: SchemaFileProblems) throws(SchemaFileError) {
        var seen: [String: Int] = [:]
        for (index, model) in models.enumerated() {
            if let first = seen[model.name] {
                throw problems.error(
                    "models[\(index)].name", "the model '\(model.name)' is declared twice (also at 'models[\(first)]')",
                    remedy: "Rename or remove one of them")
            }
            seen[model.name] = index
        }
        try checkOriginalNames(problems)
        try checkHierarchies(problems)
        for (index, model) in models.enumerated() { try check(model, at: "models[\(index)]", problems) }
    }

    /// A `superclass` names another model of the file without a cycle; a subclass declares no
    /// property its superclasses declare and no constraints (the root's apply to the hierarchy);
    /// no class of a hierarchy declares the class attribute.
    private func checkHierarchies(_ problems: SchemaFileProblems) throws(SchemaFileError) {
        for (index, model) in models.enumerated() {
            let path = "models[\(index)]"
            if rootName(of: model.name) != model.name || isHierarchyRoot(model.name),
                let place = model.attributes.firstIndex(where: { $0.name == Schema.Entity.classAttributeName })
            {
                throw problems.error(
                    "\(path).attributes[\(place)].name",
                    "'\(Schema.Entity.classAttributeName)' is the attribute that records each model's class in a "
                        + "hierarchy's entity",
                    remedy: "Rename the property")
            }
            guard let parent = model.superclass else { continue }
            guard parent != model.name, self.model(named: parent) != nil else {
                throw problems.error(
                    "\(path).superclass", "'\(parent)' is not another model of this file",
                    remedy: "Name the model that '\(model.name)' subclasses, or leave 'superclass' out")
            }
            var chain = [model.name]
            var current = parent
            while true {
                if chain.contains(current) {
                    throw problems.error(
                        "\(path).superclass",
                        "the superclasses form a cycle: "
                            + (chain + [current]).map { "'\($0)'" }.joined(separator: " → "),
                        remedy: "Give the hierarchy one root: a model without 'superclass'")
                }
                chain.append(current)
                guard let next = self.model(named: current)?.superclass else { break }
                current = next
            }
            for (key, lists) in [("unique", model.unique), ("indexes", model.indexes)] where !lists.isEmpty {
                throw problems.error(
                    "\(path).\(key)",
                    "'\(model.name)' is a subclass: its hierarchy's constraints are declared on its root '\(current)'",
                    remedy:
                        "Move the list to '\(current)' (mark a single attribute \"unique\": true where it is declared)")
            }
            let inherited = Set(ancestors(of: model.name).flatMap(Self.propertyNames))
            let own =
                model.attributes.enumerated().map { ("attributes[\($0)]", $1.name) }
                + model.relationships.enumerated().map { ("relationships[\($0)]", $1.name) }
            for (place, name) in own where inherited.contains(name) {
                throw problems.error(
                    "\(path).\(place).name", "'\(model.name)' inherits a property named '\(name)'",
                    remedy: "Rename the property, or remove it: a subclass lists only the properties it declares")
            }
        }
    }

    /// A model's superclasses in the file, nearest first.
    private func ancestors(of name: String) -> [Model] {
        var result: [Model] = []
        var current = model(named: name)?.superclass
        while let parent = current.flatMap(model(named:)), !result.contains(where: { $0.name == parent.name }) {
            result.append(parent)
            current = parent.superclass
        }
        return result
    }

    private static func propertyNames(_ model: Model) -> [String] {
        model.attributes.map(\.name) + model.relationships.map(\.name)
    }

    /// A model's `originalName` names one model of the previous version, claimed by no other model
    /// and not the name of a model of this file (which would still be that model).
    private func checkOriginalNames(_ problems: SchemaFileProblems) throws(SchemaFileError) {
        var claimed: [String: Int] = [:]
        for (index, model) in models.enumerated() {
            guard let original = model.originalName, original != model.name else { continue }
            let path = "models[\(index)].originalName"
            guard SwiftNames.isIdentifier(original) else {
                throw problems.error(
                    path, "'\(original)' is not a Swift identifier", remedy: "Name the model as it was")
            }
            if let first = claimed[original] {
                throw problems.error(
                    path,
                    "'\(model.name)' and '\(models[first].name)' (at 'models[\(first)]') both claim to be the "
                        + "renamed '\(original)'",
                    remedy:
                        "Keep \"originalName\": \"\(original)\" on the model that '\(original)' became, and remove it "
                        + "from the other")
            }
            claimed[original] = index
            if let other = models.firstIndex(where: { $0.name == original }) {
                throw problems.error(
                    path,
                    "'\(model.name)' claims to be the renamed '\(original)', but 'models[\(other)]' is still named "
                        + "'\(original)'",
                    remedy: "Remove \"originalName\", or rename or remove the model '\(original)'")
            }
        }
    }

    private func check(_ model: Model, at path: String, _ problems: SchemaFileProblems) throws(SchemaFileError) {
        var names: Set<String> = []
        let properties =
            model.attributes.enumerated().map { ("\(path).attributes[\($0)]", $1.name) }
            + model.relationships.enumerated().map { ("\(path).relationships[\($0)]", $1.name) }
        for (place, name) in properties where !names.insert(name).inserted {
            throw problems.error(
                "\(place).name", "'\(model.name)' has two properties named '\(name)'", remedy: "Rename one of them")
        }
        for (index, relationship) in model.relationships.enumerated() {
            try check(relationship, of: model, at: "\(path).relationships[\(index)]", problems)
        }
        let constrainable = Set(model.attributes.map(\.name) + model.relationships.filter { !$0.toMany }.map(\.name))
        for (key, lists) in [("unique", model.unique), ("indexes", model.indexes)] {
            for (index, list) in lists.enumerated() {
                guard !list.isEmpty else {
                    throw problems.error(
                        "\(path).\(key)[\(index)]", "the list is empty", remedy: "Name at least one property")
                }
                if let position = list.firstIndex(where: { !constrainable.contains($0) }) {
                    throw problems.error(
                        "\(path).\(key)[\(index)][\(position)]",
                        "'\(list[position])' is not an attribute or to-one relationship of '\(model.name)'",
                        remedy: "Name properties of '\(model.name)'")
                }
            }
        }
    }

    private func check(_ relationship: Relationship, of model: Model, at path: String, _ problems: SchemaFileProblems)
        throws(SchemaFileError)
    {
        guard let destination = self.model(named: relationship.destination) else {
            throw problems.error(
                "\(path).destination", "'\(relationship.destination)' is not a model of this file",
                remedy: "Use one of " + models.map { "'\($0.name)'" }.joined(separator: ", ") + ", or add the model")
        }
        guard let inverseName = relationship.inverse else { return }
        let candidates = ([destination] + ancestors(of: destination.name)).flatMap(\.relationships)
        guard let inverse = candidates.first(where: { $0.name == inverseName }) else {
            throw problems.error(
                "\(path).inverse", "'\(destination.name)' has no relationship '\(inverseName)'",
                remedy: "Name a relationship of '\(destination.name)' that points back to '\(model.name)', "
                    + "or leave 'inverse' out")
        }
        guard rootName(of: inverse.destination) == rootName(of: model.name) else {
            throw problems.error(
                "\(path).inverse",
                "'\(destination.name).\(inverseName)' points to '\(inverse.destination)', not back to '\(model.name)'",
                remedy: "Name a relationship of '\(destination.name)' whose destination is '\(model.name)'")
        }
        if let back = inverse.inverse, back != relationship.name {
            throw problems.error(
                "\(path).inverse",
                "'\(destination.name).\(inverseName)' names '\(back)' as its inverse, not '\(relationship.name)'",
                remedy: "Make the two inverses name each other")
        }
    }
}
