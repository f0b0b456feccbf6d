import Foundation
import ModelStore

/// History: designed now, run when ModelStore ships its history API.
///
/// Each case states what it will check. Until the core has a history protocol (SwiftData's
/// `HistoryProviding`: `fetchHistory`, `deleteHistory`, transactions, changes, tombstones and
/// tokens), every case reports skipped, with that reason, even for an adapter that declares
/// ``ConformanceCapabilities/history``.
enum HistoryCases {
    static let pending =
        "ModelStore has no history API yet (HistoryProviding is not in the core); this case runs once it ships"

    static func planned(_ name: String, _ summary: String) -> CaseDefinition {
        CaseDefinition(.history, name, summary, requires: .history, unavailable: pending) { env in
            throw env.failure(
                "the history case '\(name)' has no checks yet: it must not run before the history API exists")
        }
    }

    static let all: [CaseDefinition] = [
        planned(
            "transactionsRecordEveryChange",
            "Each save is one transaction listing its inserts, updates (with the changed attributes) and deletes."),
        planned(
            "transactionsCarryAuthorAndOrder",
            "Transactions carry the saving context's author and come in commit order with increasing tokens."),
        planned(
            "tombstonesKeepPreservedValues",
            "A delete's tombstone keeps exactly the attributes marked .preserveValueOnDeletion."),
        planned(
            "tokensResumeAfterReopen",
            "A token taken before closing fetches exactly the later transactions after reopening (durable stores)."),
        planned(
            "deletingHistoryExpiresTokens",
            "After deleting history, a token pointing into it fails with the history-token-expired error."),
        planned(
            "batchChangesAppearInHistory",
            "Batch deletes, updates and inserts are recorded as transactions like saves."),
    ]
}
