import Foundation

/// A store whose work is asynchronous at heart (a database server, a network service): it answers
/// fetches and saves with `async` calls, so a context's `async` entry points never hold a thread
/// of Swift's cooperative pool while the store waits.
///
/// The conformance is optional. A context's `try await context.fetch(…)` and `try await
/// context.save()` call these requirements when the store conforms, and the synchronous
/// ``DataStore`` requirements otherwise, so every store works with both forms.
///
/// Implementation requirements:
///
/// 1. Each requirement MUST behave exactly as its synchronous twin in ``DataStore`` (same results,
///    same errors, same atomicity): a context may use either for the same store, even at once.
///    **Why:** the async form is only a way of waiting, not a different store.
/// 2. The requirements MUST NOT block the calling thread while waiting for I/O; they suspend.
///    **What if you don't:** with as many blocked callers as cores, the cooperative pool stops
///    and every task of the program waits.
/// 3. The synchronous requirements MUST still work from any thread that is not one of the store's
///    own I/O threads (an event loop, say): a store blocks only the caller's thread there.
public protocol DataStoreAsynchronous: DataStore {
    /// Returns the snapshots the request asks for; as ``DataStore/fetch(_:)``.
    func fetch<T: PersistentModel>(
        _ request: DataStoreFetchRequest<T>
    ) async throws -> DataStoreFetchResult<T, Snapshot>

    /// Counts the models the request matches; as ``DataStore/fetchCount(_:)``.
    func fetchCount<T: PersistentModel>(_ request: DataStoreFetchRequest<T>) async throws -> Int

    /// The identifiers `fetch` would return, in order; as ``DataStore/fetchIdentifiers(_:)``.
    func fetchIdentifiers<T: PersistentModel>(
        _ request: DataStoreFetchRequest<T>
    ) async throws -> [PersistentIdentifier]

    /// Stores inserts, updates and deletes atomically; as ``DataStore/save(_:)``.
    func save(_ request: DataStoreSaveChangesRequest<Snapshot>) async throws -> DataStoreSaveChangesResult<Snapshot>
}
