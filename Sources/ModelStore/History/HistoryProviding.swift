import Foundation

/// A store that records every transaction it commits and lets contexts read and delete that
/// history: SwiftData's `HistoryProviding`.
///
/// Apps read history through ``ModelContext/fetchHistory(_:)`` and ``ModelContext/deleteHistory(_:)``.
/// Implementation requirements:
///
/// 1. Every committed save and every batch delete, update and insert MUST be recorded as one
///    transaction, atomically with the change itself: a transaction is in the history exactly
///    when its changes are in the store. A save that changes nothing records nothing.
/// 2. Each transaction MUST get a token larger than every earlier one of the store
///    (``DefaultHistoryToken/transactionNumber`` 1, 2, 3, …), and a durable store MUST keep tokens
///    and history across closing and reopening.
/// 3. A transaction MUST list each inserted model (under its permanent identifier), each updated
///    model with the names of the properties whose stored values changed, and each deleted model
///    with a tombstone holding exactly its `.preserveValueOnDeletion` attribute values.
/// 4. After history is deleted, a fetch whose predicate selects transactions by token and would
///    have returned a deleted one MUST throw ``DataStoreError/Code/historyTokenExpired``, never
///    return the later transactions with a silent gap. `StoreHistory` implements this check.
/// 5. The author of the saving context (``EditingState/author``) MUST be recorded with the transaction.
///
/// `StoreHistory` (adapter kit) keeps records, builds them from save requests, evaluates
/// descriptors and checks expiry, so most stores only persist its records.
public protocol HistoryProviding: DataStore {
    /// The transactions `descriptor` selects, oldest first unless it sorts otherwise.
    func fetchHistory(_ descriptor: HistoryDescriptor<DefaultHistoryTransaction>) throws
        -> [DefaultHistoryTransaction]

    /// Deletes the transactions `descriptor` selects; tokens that point into them expire.
    func deleteHistory(_ descriptor: HistoryDescriptor<DefaultHistoryTransaction>) throws
}
