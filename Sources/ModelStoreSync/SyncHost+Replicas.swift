import Foundation
import ModelStore

extension SyncHost {
    /// Whether the store records which subject owns each replica: its schema has
    /// ``SyncMetadata/replicaEntityName``, as every schema made by
    /// ``ModelStore/Schema/includingSyncMetadata()`` does.
    public var recordsReplicaOwners: Bool { store.schema.entity(named: SyncMetadata.replicaEntityName) != nil }

    /// The subject that owns `replica`: the one recorded by the first request that named it, or
    /// `subject` when this is the first (which records it). A server refuses a request whose
    /// token's subject is not the owner, so no client pushes or pulls as another's replica.
    ///
    /// Throws ``SyncError/Code/missingMetadata`` when the store does not record owners
    /// (``recordsReplicaOwners``).
    public func owner(ofReplica replica: String, claimingFor subject: String) throws -> String {
        guard recordsReplicaOwners else {
            throw SyncError(
                .missingMetadata, "the store '\(store.store.identifier)' does not record replicas' owners",
                remedy: "Open it with Schema(...).includingSyncMetadata()")
        }
        let entityName = SyncMetadata.replicaEntityName
        func recorded() throws -> String? {
            try store.fetch(entityName, filter: .equal("replica", .string(replica)), limit: 1).first?["subject"]?
                .stringValue
        }
        do {
            if let owner = try recorded() { return owner }
            let row = try DefaultSnapshot(
                persistentIdentifier: .temporary(entityName: entityName), entity: try store.entity(entityName),
                namedValues: ["replica": .string(replica), "subject": .string(subject)])
            do {
                try store.save(inserted: [row], updated: [], deleted: [])
                return subject
            } catch let error as DataStoreError where error.code == .uniqueConstraintViolation {
                // Another request (of this or another server) recorded it first: its owner stands.
                if let owner = try recorded() { return owner }
                throw error
            }
        } catch {
            throw SyncError.store(error, while: "recording the owner of a replica in '\(store.store.identifier)'")
        }
    }
}
