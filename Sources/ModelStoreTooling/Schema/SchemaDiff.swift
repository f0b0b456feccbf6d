import ModelStore

/// The differences between two schema files, each classified: a change the store makes by itself
/// (a lightweight stage) or one that needs code in a custom stage.
///
/// Models match by name, or by `originalName` in the new file, or by having the same attributes
/// and relationships as a model that only the other file has (a rename); properties by name, or
/// by `originalName` in the new file.
///
/// Class hierarchies: a new subclass, and a new attribute or relationship of a subclass, are changes
/// the store makes by itself (they add optional properties and a class to the root's entity). A
/// removed subclass, a changed superclass and a class that becomes abstract need a custom stage,
/// because models already saved with that class would no longer fit the schema.
package struct SchemaDiff {
    /// One difference.
    package struct Change: Equatable {
        /// `+` added, `-` removed, `~` changed, `>` renamed.
        package var mark: Character
        /// `Model` or `Model.property`.
        package var subject: String
        /// What changed, for people.
        package var summary: String
        /// Why it needs a custom stage and what its code should do; `nil` when the store can make it by itself.
        package var customReason: String?
        /// The custom stage's closures that do that work: `willMigrate` (old schema), `didMigrate` (new), or both.
        package var customSteps: [CustomStep] = []

        /// Whether it needs a custom stage.
        package var needsCustomStage: Bool { customReason != nil }
    }

    /// The closure of a custom stage that handles a change.
    package enum CustomStep: String {
        /// Runs on the old schema, before the store changes.
        case willMigrate
        /// Runs on the new schema, after the store changed.
        case didMigrate
    }

    /// A model of the old file that is a model of another name in the new one.
    package struct ModelRename: Equatable {
        /// Its name in the old file.
        package var old: String
        /// Its name in the new file.
        package var new: String
        /// Whether the diff inferred it (same attributes and relationships) rather than read it
        /// from the new file's `"originalName"`.
        package var isInferred: Bool
    }

    /// The changes, in the new file's order (removals after the models they belong to).
    package let changes: [Change]
    /// The models renamed, in the new file's order.
    package let modelRenames: [ModelRename]

    /// Whether any change needs a custom stage.
    package var needsCustomStage: Bool { changes.contains(where: \.needsCustomStage) }

    /// Compares two schema files.
    package init(old: SchemaDocument, new: SchemaDocument) {
        let renames = Self.modelRenames(old: old, new: new)
        var changes: [Change] = []
        for model in new.models {
            let rename = renames.first { $0.new == model.name }
            guard let previous = old.model(named: rename?.old ?? model.name) else {
                let root = new.rootName(of: model.name)
                let summary =
                    model.superclass.map {
                        "new subclass of '\($0)' (stored in the entity '\(root)', whose models keep their classes)"
                    } ?? "new model"
                changes.append(Change(mark: "+", subject: model.name, summary: summary))
                continue
            }
            if let rename { changes.append(Self.change(for: rename)) }
            changes += Self.classChanges(previous, model, old: old, new: new)
            changes += Self.attributeChanges(previous, model)
            changes += Self.relationshipChanges(previous, model)
            changes += Self.constraintChanges(previous, model)
        }
        for model in old.models
        where new.model(named: model.name) == nil && !renames.contains(where: { $0.old == model.name }) {
            guard let parent = model.superclass else {
                changes.append(Change(mark: "-", subject: model.name, summary: "removed, with its data"))
                continue
            }
            let root = old.rootName(of: model.name)
            changes.append(
                Change(
                    mark: "-", subject: model.name, summary: "subclass of '\(parent)' removed",
                    customReason: "saved '\(model.name)' models stay in the entity '\(root)' recording the class "
                        + "'\(model.name)', which the new schema cannot read: delete them in willMigrate (old schema), "
                        + "after copying what should be kept into models of a class that remains",
                    customSteps: [.willMigrate]))
        }
        self.changes = changes
        self.modelRenames = renames
    }

    /// The renamed models: those the new file marks with `"originalName"`, then each model only
    /// the old file has whose attributes and relationships are those of exactly one model only the
    /// new file has (and no other old model's).
    package static func modelRenames(old: SchemaDocument, new: SchemaDocument) -> [ModelRename] {
        var renames: [ModelRename] = []
        for model in new.models {
            guard let original = model.originalName, original != model.name, old.model(named: original) != nil,
                old.model(named: model.name) == nil
            else { continue }
            renames.append(ModelRename(old: original, new: model.name, isInferred: false))
        }
        let removed = old.models.filter { model in
            new.model(named: model.name) == nil && !renames.contains { $0.old == model.name }
        }
        let added = new.models.filter { model in
            old.model(named: model.name) == nil && !renames.contains { $0.new == model.name }
        }
        for model in removed {
            let matches = added.filter { sameShape(model, $0) }
            guard matches.count == 1, let match = matches.first,
                removed.filter({ sameShape($0, match) }).count == 1
            else { continue }
            renames.append(ModelRename(old: model.name, new: match.name, isInferred: true))
        }
        return new.models.compactMap { model in renames.first { $0.new == model.name } }
    }

    /// Whether two models have the same stored properties and constraints: the same attributes,
    /// and relationships that differ at most in their destinations' names (a destination may be
    /// renamed too). Models without properties have no shape to compare.
    private static func sameShape(_ one: SchemaDocument.Model, _ other: SchemaDocument.Model) -> Bool {
        func attributes(_ model: SchemaDocument.Model) -> [SchemaDocument.Attribute] {
            model.attributes.map { attribute in
                var attribute = attribute
                attribute.originalName = nil
                return attribute
            }
        }
        func relationships(_ model: SchemaDocument.Model) -> [SchemaDocument.Relationship] {
            model.relationships.map { relationship in
                var relationship = relationship
                (relationship.destination, relationship.originalName) = ("", nil)
                return relationship
            }
        }
        return !(one.attributes.isEmpty && one.relationships.isEmpty) && one.superclass == other.superclass
            && attributes(one) == attributes(other)
            && relationships(one) == relationships(other) && one.unique == other.unique
            && one.indexes == other.indexes
    }

    /// A model's place in its hierarchy: its superclass and whether it is abstract.
    private static func classChanges(
        _ old: SchemaDocument.Model, _ new: SchemaDocument.Model, old oldDocument: SchemaDocument,
        new newDocument: SchemaDocument
    ) -> [Change] {
        var changes: [Change] = []
        if old.superclass != new.superclass {
            let (before, after) = (old.superclass ?? "none", new.superclass ?? "none")
            let oldRoot = oldDocument.rootName(of: old.name)
            let newRoot = newDocument.rootName(of: new.name)
            let moves =
                oldRoot == newRoot
                ? "its saved models stay in the entity '\(newRoot)' but inherit other properties"
                : "its saved models are in the entity '\(oldRoot)', and the new schema keeps them in '\(newRoot)'"
            changes.append(
                Change(
                    mark: "~", subject: new.name, summary: "superclass '\(before)' becomes '\(after)'",
                    customReason: "the store cannot move models to another place in a hierarchy: \(moves). Read each "
                        + "'\(old.name)' in willMigrate (old schema), delete it, and create it again in didMigrate "
                        + "(new schema)", customSteps: [.willMigrate, .didMigrate]))
        }
        if new.isAbstract && !old.isAbstract {
            changes.append(
                Change(
                    mark: "~", subject: new.name, summary: "becomes abstract",
                    customReason: "saved models of exactly the class '\(new.name)' are no longer allowed: delete them, "
                        + "or copy them into models of a subclass, in willMigrate (old schema)",
                    customSteps: [.willMigrate]))
        } else if old.isAbstract && !new.isAbstract {
            changes.append(Change(mark: "~", subject: new.name, summary: "no longer abstract"))
        }
        return changes
    }

    /// The change for a renamed model: custom, as the store cannot rename a model by itself.
    private static func change(for rename: ModelRename) -> Change {
        var reason =
            "the store's lightweight migration has no model renames: it would remove '\(rename.old)' with its data "
            + "and start '\(rename.new)' empty. The plan reads each '\(rename.old)' in willMigrate and creates it "
            + "again as a '\(rename.new)' in didMigrate"
        if rename.isInferred {
            reason +=
                ". The rename is inferred from the same attributes and relationships: if it is one, say so with "
                + "\"originalName\": \"\(rename.old)\" on '\(rename.new)' in the new file"
        }
        return Change(
            mark: ">", subject: rename.new,
            summary: "renamed from '\(rename.old)'" + (rename.isInferred ? " (inferred)" : ""),
            customReason: reason, customSteps: [.willMigrate, .didMigrate])
    }

    private static func attributeChanges(_ old: SchemaDocument.Model, _ new: SchemaDocument.Model) -> [Change] {
        var changes: [Change] = []
        var matched: Set<String> = []
        for attribute in new.attributes {
            let subject = "\(new.name).\(attribute.name)"
            let original = attribute.originalName.flatMap { name in old.attributes.first { $0.name == name } }
            guard let previous = original ?? old.attributes.first(where: { $0.name == attribute.name }) else {
                var change = Change(mark: "+", subject: subject, summary: "new attribute '\(attribute.type)'")
                if attribute.unique && !attribute.isFreshPerModel {
                    change.summary += ", unique"
                    change.customReason =
                        "every existing '\(new.name)' gets the same initial value, which '.unique' refuses once there "
                        + "are two: add it without '.unique' in this version and give each model its own value in "
                        + "didMigrate, then add '.unique' in the next version"
                    change.customSteps = [.didMigrate]
                }
                changes.append(change)
                continue
            }
            matched.insert(previous.name)
            if previous.name != attribute.name {
                changes.append(Change(mark: ">", subject: subject, summary: "renamed from '\(previous.name)'"))
            }
            changes += Self.changes(from: previous, to: attribute, subject: subject, model: new.name)
        }
        for attribute in old.attributes where !matched.contains(attribute.name) {
            changes.append(
                Change(mark: "-", subject: "\(old.name).\(attribute.name)", summary: "removed, with its values"))
        }
        return changes
    }

    private static func changes(
        from old: SchemaDocument.Attribute, to new: SchemaDocument.Attribute, subject: String, model: String
    ) -> [Change] {
        var changes: [Change] = []
        if old.type != new.type {
            var change = Change(mark: "~", subject: subject, summary: "type '\(old.type)' becomes '\(new.type)'")
            if new.type == .optional(old.type) {
                change.summary += " (now optional)"
            } else if old.type == .optional(new.type) {
                change.summary += " (now required: a missing value becomes the initial value)"
            } else {
                change.customReason =
                    "the store cannot convert '\(old.type)' to '\(new.type)': read the old values in willMigrate "
                    + "(old schema) and set the converted ones in didMigrate (new schema), or add a new attribute "
                    + "and remove the old one"
                change.customSteps = [.willMigrate, .didMigrate]
            }
            changes.append(change)
        }
        if new.unique && !old.unique {
            changes.append(
                Change(
                    mark: "~", subject: subject, summary: "becomes unique",
                    customReason: "existing '\(model)' models may repeat a value: remove or merge the duplicates in "
                        + "willMigrate (old schema), before the store adds the constraint",
                    customSteps: [.willMigrate]))
        } else if old.unique && !new.unique {
            changes.append(Change(mark: "~", subject: subject, summary: "no longer unique"))
        }
        for (name, before, after) in [
            ("external storage", old.externalStorage, new.externalStorage),
            ("preserve value on deletion", old.preserveValueOnDeletion, new.preserveValueOnDeletion),
        ] where before != after {
            changes.append(Change(mark: "~", subject: subject, summary: (after ? "gains " : "loses ") + name))
        }
        if old.defaultValue != new.defaultValue && old.type == new.type {
            changes.append(Change(mark: "~", subject: subject, summary: "new initial value (for new models only)"))
        }
        return changes
    }

    private static func relationshipChanges(_ old: SchemaDocument.Model, _ new: SchemaDocument.Model) -> [Change] {
        var changes: [Change] = []
        var matched: Set<String> = []
        for relationship in new.relationships {
            let subject = "\(new.name).\(relationship.name)"
            let original = relationship.originalName.flatMap { name in old.relationships.first { $0.name == name } }
            guard let previous = original ?? old.relationships.first(where: { $0.name == relationship.name }) else {
                let kind = relationship.toMany ? "to-many" : "to-one"
                changes.append(
                    Change(
                        mark: "+", subject: subject,
                        summary: "new \(kind) relationship to '\(relationship.destination)'"))
                continue
            }
            matched.insert(previous.name)
            if previous.name != relationship.name {
                changes.append(Change(mark: ">", subject: subject, summary: "renamed from '\(previous.name)'"))
            }
            changes += Self.changes(from: previous, to: relationship, subject: subject)
        }
        for relationship in old.relationships where !matched.contains(relationship.name) {
            changes.append(Change(mark: "-", subject: "\(old.name).\(relationship.name)", summary: "removed"))
        }
        return changes
    }

    private static func changes(
        from old: SchemaDocument.Relationship, to new: SchemaDocument.Relationship, subject: String
    ) -> [Change] {
        var changes: [Change] = []
        if old.destination != new.destination {
            changes.append(
                Change(
                    mark: "~", subject: subject,
                    summary: "destination '\(old.destination)' becomes '\(new.destination)'",
                    customReason: "the related models are of another model now: note them in willMigrate and relate "
                        + "the new ones in didMigrate", customSteps: [.willMigrate, .didMigrate]))
        }
        if old.toMany && !new.toMany {
            changes.append(
                Change(
                    mark: "~", subject: subject, summary: "to-many becomes to-one",
                    customReason: "a model may relate to several: keep one (or none) in willMigrate",
                    customSteps: [.willMigrate]))
        } else if !old.toMany && new.toMany {
            changes.append(Change(mark: "~", subject: subject, summary: "to-one becomes to-many"))
        }
        if old.deleteRule != new.deleteRule {
            changes.append(
                Change(
                    mark: "~", subject: subject,
                    summary: "delete rule '\(old.deleteRule.rawValue)' becomes '\(new.deleteRule.rawValue)'"))
        }
        if old.inverse != new.inverse {
            changes.append(
                Change(
                    mark: "~", subject: subject,
                    summary: "inverse '\(old.inverse ?? "none")' becomes '\(new.inverse ?? "none")'"))
        }
        let stricterMinimum = new.minimumModelCount > old.minimumModelCount
        let stricterMaximum =
            new.maximumModelCount != 0
            && (old.maximumModelCount == 0 || new.maximumModelCount < old.maximumModelCount)
        if stricterMinimum || stricterMaximum {
            changes.append(
                Change(
                    mark: "~", subject: subject,
                    summary: "count limits \(old.minimumModelCount)…\(old.maximumModelCount) become "
                        + "\(new.minimumModelCount)…\(new.maximumModelCount) (0: none)",
                    customReason: "existing models may be outside the new limits: bring them within in didMigrate",
                    customSteps: [.didMigrate]))
        } else if old.minimumModelCount != new.minimumModelCount || old.maximumModelCount != new.maximumModelCount {
            changes.append(Change(mark: "~", subject: subject, summary: "count limits relaxed"))
        }
        return changes
    }

    private static func constraintChanges(_ old: SchemaDocument.Model, _ new: SchemaDocument.Model) -> [Change] {
        var changes: [Change] = []
        for names in new.unique where !old.unique.contains(names) {
            changes.append(
                Change(
                    mark: "+", subject: new.name, summary: "unique (\(names.joined(separator: ", ")))",
                    customReason: "existing models may repeat the combination: remove or merge the duplicates in "
                        + "willMigrate (old schema)", customSteps: [.willMigrate]))
        }
        for names in old.unique where !new.unique.contains(names) {
            changes.append(Change(mark: "-", subject: new.name, summary: "unique (\(names.joined(separator: ", ")))"))
        }
        for names in new.indexes where !old.indexes.contains(names) {
            changes.append(Change(mark: "+", subject: new.name, summary: "index (\(names.joined(separator: ", ")))"))
        }
        for names in old.indexes where !new.indexes.contains(names) {
            changes.append(Change(mark: "-", subject: new.name, summary: "index (\(names.joined(separator: ", ")))"))
        }
        return changes
    }
}
