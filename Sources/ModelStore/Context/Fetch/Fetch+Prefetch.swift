import Foundation

extension ModelContext {
    /// Loads the relationships named by `descriptor.relationshipKeyPathsForPrefetching` for every
    /// model at once: one store read per relationship instead of one per model on first access.
    func prefetchRelationships<T: PersistentModel>(of models: [T], for descriptor: FetchDescriptor<T>) throws {
        guard descriptor.relationshipKeyPathsForPrefetching.count != 0, models.count != 0,
            let layout = ModelLayout.of(T.self)
        else { return }
        let entity = try self.entity(named: layout.entityName)
        for keyPath in descriptor.relationshipKeyPathsForPrefetching {
            guard let name = entity.propertyName(for: keyPath),
                let field = layout.fieldsByName[name] as? RelationshipAccessor
            else {
                throw DataStoreError(
                    .invalidValue, "a key path to prefetch is not a relationship of '\(entity.name)'",
                    remedy: "List only key paths to @Relationship properties in relationshipKeyPathsForPrefetching",
                    entityName: entity.name)
            }
            var ids: [PersistentIdentifier] = []
            var seen: Set<PersistentIdentifier> = []
            for model in models where field.isFault(model) {
                for id in field.references(of: model).referencedIdentifiers where registry[id] == nil {
                    if seen.insert(id).inserted { ids.append(id) }
                }
            }
            func load<D: PersistentModel>(_ type: D.Type) throws { _ = try loadModels(ids, as: D.self) }
            if !ids.isEmpty { try load(field.destinationType) }
            for model in models where field.isFault(model) { _ = field.models(of: model) }
        }
    }
}
