import Foundation

// Save, step 5: the stores write, one atomically or several all or nothing.
extension ModelContext {
    /// What the stores returned.
    struct Written {
        /// Each result's permanent identifiers, read only as far as the models need them.
        var mappings: [IdentifierMapping] = []
        var reregister: [PersistentIdentifier: DefaultSnapshot] = [:]
        var historyTokens: [DefaultHistoryToken] = []

        mutating func add(_ result: DataStoreSaveChangesResult<DefaultSnapshot>) {
            if let token = result.historyToken { historyTokens.append(token) }
            mappings.append(result.mapping)
            reregister.merge(result.snapshotsToReregister) { $1 }
        }

        /// The permanent identifier of every inserted model by its temporary one, from every store.
        var remapped: [PersistentIdentifier: PersistentIdentifier] {
            if mappings.count == 1 { return mappings[0].dictionary }
            return mappings.reduce(into: [:]) { all, mapping in all.merge(mapping.dictionary) { $1 } }
        }

        /// When one store took the whole save and listed its permanent identifiers in the request's
        /// order (which is ``Changes/inserted``'s, or ``Changes/insertedModels``' for a save in
        /// chunks): that list, `nil` at an insert that kept its own.
        var mintedInOrder: IdentifierMapping.Ordered? { mappings.count == 1 ? mappings[0].ordered : nil }
    }

    /// Writes the changes: one atomic save when one store is involved; otherwise a two-phase save
    /// across the stores, or an error before anything is written when a store cannot take part.
    func write(_ changes: Changes) throws -> Written {
        var written = Written()
        let stores = container.channels
        if changes.insertsInChunks {
            written.add(try saveInChunks(changes, to: stores[0]))
            return written
        }
        if stores.count == 1 {
            let request = changes.request(
                editingState, inserted: changes.inserted, updated: changes.updated, deleted: changes.deleted)
            if !(request.insertedCount == 0 && request.updated.isEmpty && request.deleted.isEmpty) {
                written.add(try stores[0].save(request))
            }
            return written
        }
        var parts = [(inserted: [DefaultSnapshot], updated: [DefaultSnapshot], deleted: [DefaultSnapshot])](
            repeating: ([], [], []), count: stores.count)
        for snapshot in changes.inserted {
            parts[try container.storeIndex(for: snapshot.entity.name)].inserted.append(snapshot)
        }
        for snapshot in changes.updated {
            parts[try container.storeIndex(for: snapshot.entity.name)].updated.append(snapshot)
        }
        for snapshot in changes.deleted {
            parts[try container.storeIndex(for: snapshot.entity.name)].deleted.append(snapshot)
        }
        let requests = parts.indices.compactMap {
            index -> (store: Int, request: DataStoreSaveChangesRequest<DefaultSnapshot>)? in
            let part = parts[index]
            guard !(part.inserted.isEmpty && part.updated.isEmpty && part.deleted.isEmpty) else { return nil }
            return (
                index,
                changes.request(editingState, inserted: part.inserted, updated: part.updated, deleted: part.deleted)
            )
        }
        if requests.count == 1, let only = requests.first {
            written.add(try stores[only.store].save(only.request))
            return written
        }
        guard !requests.isEmpty else { return written }
        for (index, _) in requests { try stores[index].requireAllowsSave("a save") }
        let unable = requests.filter { !stores[$0.store].takesPartInTwoPhaseSaves }.map {
            container.configurations[$0.store].name
        }
        if !unable.isEmpty {
            let involved = requests.map { "'\(container.configurations[$0.store].name)'" }.joined(separator: ", ")
            throw DataStoreError(
                .unsupportedFeature,
                "this save changes models in \(requests.count) stores (\(involved)), and \(unable.map { "'\($0)'" }.joined(separator: ", ")) cannot take part in a save across stores, so it would not be all or nothing",
                remedy:
                    "Save the changes of each store on their own (one save() per store), or give the store's adapter a DataStoreTwoPhaseSaving conformance"
            )
        }
        var prepared: [ErasedPreparedSave] = []
        do {
            for (index, request) in requests { prepared.append(try stores[index].prepare(request)) }
            for part in prepared { try part.commit() }
        } catch {
            for part in prepared.reversed() { part.abort() }
            throw error
        }
        for part in prepared {
            part.finish()
            written.add(part.result)
        }
        return written
    }
}
