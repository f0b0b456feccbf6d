import Foundation

/// A store that can take part in a save that spans several stores: it prepares its part of the
/// save, and applies it only once every store of the save has prepared.
///
/// A context whose save touches one store calls ``DataStore/save(_:)``. When a save touches
/// several stores, the context prepares each store's part in the container's store order, then
/// commits each in the same order, then finishes each; if anything fails it aborts every part,
/// so every store is as it was. A save that would span a store without this conformance fails
/// before anything is written.
///
/// Implementation requirements:
///
/// 1. ``prepareSave(_:)`` MUST do everything that can fail because of what the request holds:
///    validation, uniqueness, minting identifiers, encoding. It MUST NOT change what fetches see.
///    **Why:** the other stores' parts are applied only if every part prepared.
/// 2. From a successful prepare until ``PreparedStoreSave/finish()`` or
///    ``PreparedStoreSave/abort()``, the store MUST keep other saves out (hold its write lock), so
///    nothing invalidates what it checked. Fetches SHOULD go on meanwhile, seeing the store as it
///    was before the commit. The context finishes or aborts promptly, on the thread that prepared,
///    and saves nothing else to the store in between. **What if you don't:** two contexts could both
///    pass a uniqueness check.
/// 3. ``PreparedStoreSave/commit()`` applies the prepared part. It may fail only for reasons the
///    request could not foresee (I/O), and then MUST leave the store exactly as before prepare.
/// 4. ``PreparedStoreSave/abort()`` MUST leave the store exactly as before prepare, whether or not
///    the part was committed: a part committed before another store's commit failed is undone.
public protocol DataStoreTwoPhaseSaving: DataStore {
    /// Validates a save and stages it without applying it; see the type's rules 1 and 2.
    ///
    /// The returned part carries the result ``DataStore/save(_:)`` would return (the permanent
    /// identifiers minted for inserted snapshots).
    func prepareSave(_ request: DataStoreSaveChangesRequest<Snapshot>) throws -> any PreparedStoreSave<Snapshot>
}

/// One store's prepared part of a save across several stores: see ``DataStoreTwoPhaseSaving``.
public protocol PreparedStoreSave<Snapshot>: AnyObject {
    /// The store's snapshot type.
    associatedtype Snapshot: DataStoreSnapshot

    /// What the save returns once committed: identifiers minted for inserted snapshots, and
    /// snapshots to re-register.
    var result: DataStoreSaveChangesResult<Snapshot> { get }

    /// Applies the prepared part; on failure the store MUST be as before the prepare.
    func commit() throws

    /// Discards the part, committed or not, leaving the store as before the prepare, and releases
    /// what the prepare held. Calling it after ``finish()`` does nothing.
    func abort()

    /// Ends a committed save and releases what the prepare held. Calling it twice does nothing.
    func finish()
}
