import ModelStore
import ModelStoreAdapterKit

/// A save's one change, recorded in the history by the statement that writes its row (see
/// ``HistoryLog/recordingOneChange(after:parameters:)``), computed before the row is written from
/// the values the context read: a save of one model at the version the context read, whose
/// previous values the statement also returns, so the save checks them before it commits.
struct OneChangeRecording: Sendable {
    /// What the statement did: it took the transaction's number, and recorded the change under it
    /// unless its snapshot was too old to (see ``HistoryLog/predecessor``); then `totals` are for
    /// ``HistoryLog/trim(total:before:limit:on:)``.
    struct Recorded: Sendable {
        let number: Int64
        let totals: (total: Int64, before: Int64)?
    }

    let history: HistoryLog
    let change: StoreHistoryRecord.Change
    let author: String?
}
