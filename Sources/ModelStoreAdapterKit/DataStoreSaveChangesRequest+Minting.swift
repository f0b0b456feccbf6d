import Foundation
import ModelStore

extension DataStoreSaveChangesRequest {
    /// Mints the permanent identifiers of a save's inserted snapshots: the first thing a `save`
    /// does (rule 3 of ``DataStore``).
    ///
    /// Every inserted snapshot whose identifier is temporary, or was minted by another store, gets
    /// an integer primary key of `storeIdentifier`, counting up from `nextPrimaryKey`. One that
    /// already carries an identifier of this store keeps it, and `nextPrimaryKey` moves past it, so
    /// later keys never collide with it. Rewrite references next, with
    /// ``DataStoreSnapshot/copy(persistentIdentifier:remappedIdentifiers:)`` on every inserted and
    /// updated snapshot, and return the mapping in ``DataStoreSaveChangesResult/remappedIdentifiers``.
    ///
    /// ```swift
    /// var nextKey = state.nextPrimaryKey
    /// let remapped = request.mintIdentifiers(storeIdentifier: identifier, nextPrimaryKey: &nextKey)
    /// let inserted = request.inserted.map {
    ///     $0.copy(persistentIdentifier: remapped[$0.persistentIdentifier] ?? $0.persistentIdentifier,
    ///             remappedIdentifiers: remapped)
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - storeIdentifier: The store's ``DataStore/identifier``.
    ///   - nextPrimaryKey: The store's key counter: the first key to mint; on return, the next one.
    /// - Returns: The permanent identifier of every inserted snapshot that needed one, by its old identifier.
    public func mintIdentifiers(
        storeIdentifier: String, nextPrimaryKey: inout Int64
    ) -> [PersistentIdentifier: PersistentIdentifier] {
        mintIdentifiersInOrder(storeIdentifier: storeIdentifier, nextPrimaryKey: &nextPrimaryKey).remapped
    }

    /// ``mintIdentifiers(storeIdentifier:nextPrimaryKey:)``, also returning each inserted snapshot's
    /// permanent identifier in the order of ``inserted`` (`nil` for one that keeps its own), so a
    /// store need not look each one up again.
    func mintIdentifiersInOrder(
        storeIdentifier: String, nextPrimaryKey: inout Int64
    ) -> (remapped: [PersistentIdentifier: PersistentIdentifier], minted: [PersistentIdentifier?]) {
        let minted = mintIdentifiersInOrderOnly(storeIdentifier: storeIdentifier, nextPrimaryKey: &nextPrimaryKey)
        return (Self.remapping(inserted, minted), minted)
    }

    /// Each inserted snapshot's permanent identifier in the order of ``inserted`` (`nil` for one that
    /// keeps its own), without the mapping by old identifier (`remapping(_:_:)` builds it).
    func mintIdentifiersInOrderOnly(storeIdentifier: String, nextPrimaryKey: inout Int64) -> [PersistentIdentifier?] {
        var minted: [PersistentIdentifier?] = []
        minted.reserveCapacity(inserted.count)
        for snapshot in inserted {
            let id = snapshot.persistentIdentifier
            if id.isTemporary || id.storeIdentifier != storeIdentifier {
                minted.append(
                    PersistentIdentifier.identifier(
                        for: storeIdentifier, entityName: id.entityName, primaryKey: nextPrimaryKey))
                nextPrimaryKey += 1
            } else {
                if let key = id.primaryKey.intValue, key >= nextPrimaryKey { nextPrimaryKey = key + 1 }
                minted.append(nil)
            }
        }
        return minted
    }
}
