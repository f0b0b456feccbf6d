import Foundation

// Save, step 1: the delete rules decide every model the save deletes or unlinks.
extension ModelContext {
    /// A model whose relationship to a deleted model is cleared by a `.nullify` rule.
    struct Nullification {
        let model: any PersistentModel
        let field: RelationshipAccessor
    }

    /// What a save deletes: the requested models, everything their cascades reach, and the
    /// references the nullify rules clear. Saved and never-saved models alike.
    struct Deletion {
        var models = OrderedModels()
        var identifiers: Set<PersistentIdentifier> = []
        var objects: Set<ObjectIdentifier> = []
        var nullifications: [Nullification] = []

        func contains(_ model: any PersistentModel) -> Bool { models.contains(model) }
    }

    /// The cascade closure, deny checks and nullifications of a save, computed without changing anything.
    func collectDeletions(_ requested: [any PersistentModel]) throws -> Deletion {
        var deletion = Deletion()
        guard !requested.isEmpty else { return deletion }
        var worklist = requested
        var denials: [(model: any PersistentModel, field: RelationshipAccessor, related: [any PersistentModel])] = []
        while let model = worklist.popLast() {
            guard !deletion.contains(model) else { continue }
            deletion.models.append(model)
            deletion.identifiers.insert(model.persistentModelID)
            deletion.objects.insert(ObjectIdentifier(model))
            guard let layout = storageLayout(of: model) else { continue }
            for field in layout.relationships {
                let related = field.models(of: model).compactMap { $0 as? any PersistentModel }
                guard !related.isEmpty else { continue }
                switch field.deleteRule {
                case .cascade: worklist.append(contentsOf: related)
                case .deny: denials.append((model, field, related))
                case .nullify:
                    if let inverse = field.inverse {
                        deletion.nullifications += related.map { Nullification(model: $0, field: inverse) }
                    }
                case .noAction: break
                }
            }
        }
        for denial in denials {
            let blocking = denial.related.filter { !deletion.contains($0) }
            guard !blocking.isEmpty else { continue }
            let entity = denial.model.persistentModelID.entityName
            throw DataStoreError(
                .denyRuleViolation,
                "cannot delete \(denial.model.persistentModelID): its relationship '\(entity).\(denial.field.name)' still refers to \(blocking.count) model(s) and its delete rule is .deny",
                remedy: "Delete or detach the related '\(denial.field.destinationEntityName)' models first",
                entityName: entity, propertyNames: [denial.field.name])
        }
        return deletion
    }
}
