import Foundation

// Save, steps 2 and 5 for a large insert: the store reads the new models' snapshots a chunk at a
// time, made as it reads them, so that a million of them and their values never exist at once.
extension ModelContext {
    /// How many inserted snapshots a chunk holds.
    static let insertChunkSize = 8_192

    /// Whether the store can read these new models' snapshots a chunk at a time, made as it reads
    /// them (``Changes/insertsInChunks``). Throws, as a save does, when a model's type cannot be
    /// saved.
    ///
    /// They can when the save has one store, which is synchronous (the snapshots are made on this
    /// context's thread while it waits for the store), and every model:
    /// - is of a type whose stored values are all attributes of the types read in line (`String`,
    ///   `Int`, `Int64`, `Double`, `Bool`, `Date`), with no relationship, value transformer or
    ///   encryption: reading its values cannot fail, so no chunk can fail to be made after the store
    ///   has begun to write, and the model's saved values are its own afterwards;
    /// - has no value a fetch left out;
    /// - and, for an entity with unique constraints, goes to a store that checks them itself (the
    ///   context's own check reads every inserted snapshot).
    func insertsInChunks(_ models: [any PersistentModel]) throws -> Bool {
        let channels = container.channels
        guard channels.count == 1, !channels[0].isAsynchronous, !models.isEmpty else { return false }
        let enforcesUniqueness = channels[0].enforcesUniqueness
        var layouts: LayoutCache?
        var lastType: ObjectIdentifier?
        for model in models {
            let type = ObjectIdentifier(Swift.type(of: model))
            if type != lastType {
                lastType = type
                let cache = try layout(of: model, layouts: &layouts)
                guard cache.layout.readsEveryValueInLine,
                    enforcesUniqueness || cache.entity.uniquenessConstraints.isEmpty
                else { return false }
            }
            if model.persistentBackingData.unfetchedSlots != nil { return false }
        }
        return true
    }

    /// The request for a save whose inserted snapshots are made a chunk at a time (``Changes/insertsInChunks``).
    ///
    /// When every model is of one type, a store that writes the save with a batch insert gets their
    /// values as rows (`DataStoreSaveChangesRequest.insertedBatch()`), with no snapshot made.
    func chunkedRequest(_ changes: Changes) -> DataStoreSaveChangesRequest<DefaultSnapshot> {
        let models = changes.insertedModels
        let firstType = models.first.map { ObjectIdentifier(Swift.type(of: $0)) }
        let oneType = models.allSatisfy { ObjectIdentifier(Swift.type(of: $0)) == firstType }
        /// The layout of a model whose type `insertsInChunks(_:)` checked.
        func checkedLayout(of model: any PersistentModel, _ layouts: inout LayoutCache?) -> LayoutCache {
            do {
                return try layout(of: model, layouts: &layouts)
            } catch {
                preconditionFailure("a model whose values are read in line could not be read: \(error)")
            }
        }
        let source = InsertedSnapshotSource<DefaultSnapshot>(
            count: models.count, chunkSize: Self.insertChunkSize,
            make: { range in
                var layouts: LayoutCache?
                var snapshots: [DefaultSnapshot] = []
                snapshots.reserveCapacity(range.count)
                for model in models[range] {
                    // `insertsInChunks(_:)` checked the types and that every value is read in line.
                    let cache = checkedLayout(of: model, &layouts)
                    let id = model.persistentBackingData.identifier(entityName: cache.entity.name)
                    snapshots.append(
                        DefaultSnapshot(
                            persistentIdentifier: id, entity: cache.entity, values: cache.layout.inlineValues(of: model)
                        ))
                }
                return snapshots
            },
            makeRows: !oneType
                ? nil
                : { range in
                    var layouts: LayoutCache?
                    // Every model is of the first one's type (an empty range is the end of the rows).
                    let cache = checkedLayout(of: models[0], &layouts)
                    var rows = BatchRows(entity: cache.entity, capacity: range.count)
                    for model in models[range] { rows.values.append(contentsOf: cache.layout.inlineValues(of: model)) }
                    rows.count = range.count
                    return rows
                })
        // Only new models: no updated model, so no expected values.
        return DataStoreSaveChangesRequest(editingState: editingState, inserted: source, updated: [], deleted: [])
    }

    /// Saves a request whose inserted snapshots are made a chunk at a time, and keeps of the result
    /// only what the context reads: the identifiers in order, not the means to build the dictionary,
    /// which holds the request and so the models.
    ///
    /// When the store kept a copy of the request, its ``DataStoreSaveChangesRequest/inserted`` is
    /// made now, while the models still have the identifiers it must hold (the context gives them
    /// their permanent ones next), and is what that copy then reads.
    func saveInChunks(
        _ changes: Changes, to channel: StoreChannel
    ) throws -> DataStoreSaveChangesResult<DefaultSnapshot> {
        var request = chunkedRequest(changes)
        var result = try channel.save(request)
        result.mapping = result.mapping.orderedOnly ?? result.mapping
        request.releaseInserted()
        return result
    }
}

extension ModelLayout {
    /// The stored values of a model whose values are all read in line (``readsEveryValueInLine``),
    /// which cannot fail.
    func inlineValues(of model: any PersistentModel) -> [StoreValue] {
        do {
            return try values(of: model)
        } catch {
            preconditionFailure("a model whose values are read in line could not be read: \(error)")
        }
    }

    /// Whether every stored value of a model of this layout is an attribute read in line, with
    /// saved values that are the model's own (no relationship, transformer or encryption): reading
    /// them cannot fail.
    var readsEveryValueInLine: Bool {
        savedValuesAreModelValues && fields.allSatisfy { ($0 as? AttributeAccessor)?.inlineScalar != nil }
    }
}
