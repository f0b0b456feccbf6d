import Foundation
import ModelStore

/// One numbered MUST rule of a store protocol's implementation requirements, with the cases that
/// fail when an adapter breaks it.
///
/// ``ConformanceSuite/contractRules`` lists every numbered rule of `DataStore`,
/// `DataStoreAsynchronous`, `DataStoreTwoPhaseSaving`, `DataStoreQuerying` and `HistoryProviding`;
/// a test of the suite reads the rules from the protocols' own documentation and fails when one is
/// missing here, or when a case named here does not exist, so the list and the contract cannot drift.
public struct ConformanceRule: Sendable, Hashable, CustomStringConvertible, Identifiable {
    /// The protocol whose documentation numbers the rule (`"DataStore"`).
    public let protocolName: String
    /// The rule's number in that documentation.
    public let number: Int
    /// What the rule asks, in one line.
    public let summary: String
    /// The identifiers (``ConformanceCase/id``) of the cases that fail when an adapter breaks the rule.
    public let caseIDs: [String]

    /// The rule's name, `"DataStore 2"`.
    public var id: String { "\(protocolName) \(number)" }

    /// The rule's name and summary.
    public var description: String { "\(id): \(summary)" }

    init(_ protocolName: String, _ number: Int, _ summary: String, _ caseIDs: [String]) {
        self.protocolName = protocolName
        self.number = number
        self.summary = summary
        self.caseIDs = caseIDs
    }
}

extension ConformanceSuite {
    /// Every numbered MUST rule of the store protocols, each with the cases that check it.
    public static let contractRules: [ConformanceRule] = [
        ConformanceRule(
            "DataStore", 1, "every requirement is safe to call from any thread",
            ["storeContract.concurrentRequestsLoseNothing", "contexts.concurrentContextsLoseNothing"]),
        ConformanceRule(
            "DataStore", 2, "a save is atomic: all of it is stored, or none",
            [
                "storeContract.enforcedUniquenessIsAtomic", "uniqueness.duplicateWithinOneSave",
                "persistence.failedSaveNeverReachesDisk",
            ]),
        ConformanceRule(
            "DataStore", 3, "a save mints a permanent identifier per insert and remaps references to temporary ones",
            [
                "storeContract.saveMintsPermanentIdentifiers", "storeContract.saveRemapsReferences",
                "identifiers.neverReusedAfterDeletingTheNewest", "identifiers.neverReusedAfterErase",
            ]),
        ConformanceRule(
            "DataStore", 4,
            "a fetch returns only the requested entity and honours predicate, sort, offset and limit (or refuses)",
            [
                "storeContract.fetchReturnsOnlyRequestedEntity", "storeContract.fetchHonoursWindow",
                "storeContract.sortedWindowsAgree", "fetch.predicatesFilter", "values.integers", "values.strings",
            ]),
        ConformanceRule(
            "DataStore", 5, "a store keeps no reference to models or contexts",
            ["contexts.storeKeepsNoModels"]),
        ConformanceRule(
            "DataStoreAsynchronous", 1, "each asynchronous requirement behaves exactly as its synchronous twin",
            ["storeContract.asynchronousMatchesSynchronous"]),
        ConformanceRule(
            "DataStoreAsynchronous", 2, "the asynchronous requirements suspend instead of blocking the thread",
            ["storeContract.asynchronousCallsSuspend"]),
        ConformanceRule(
            "DataStoreAsynchronous", 3,
            "the synchronous requirements work from any thread but the store's own, in a task too",
            ["storeContract.synchronousWorksFromAnyThread"]),
        ConformanceRule(
            "DataStoreTwoPhaseSaving", 1, "prepareSave does all that can fail and changes nothing fetches see",
            ["graphIntegrity.twoPhaseSaveContract"]),
        ConformanceRule(
            "DataStoreTwoPhaseSaving", 2, "a prepared save keeps other saves out until it finishes or aborts",
            ["graphIntegrity.preparedSaveKeepsOtherSavesOut"]),
        ConformanceRule(
            "DataStoreTwoPhaseSaving", 3,
            "commit applies the prepared part (and fails only leaving the store as before)",
            ["graphIntegrity.twoPhaseSaveContract"]),
        ConformanceRule(
            "DataStoreTwoPhaseSaving", 4, "abort leaves the store as before the prepare, committed or not",
            ["graphIntegrity.twoPhaseSaveContract"]),
        ConformanceRule(
            "DataStoreQuerying", 1, "every filter kind the store declares is applied exactly",
            [
                "storeContract.pushedFiltersAreExact", "pushDown.identifiers",
                "pushDown.nativeFiltersAreNotRefused",
            ]),
        ConformanceRule(
            "DataStoreQuerying", 2,
            "a request's query is applied (filter, sort with ties by identifier, window), its descriptor is not; "
                + "a superset only where the query allows inexact matches",
            [
                "storeContract.fetchHonoursWindow", "storeContract.sortTiesFollowIdentifierOrder",
                "storeContract.countAndIdentifiersAgreeWithFetch", "storeContract.inexactMatchesOnlyWhenAllowed",
            ]),
        ConformanceRule(
            "DataStoreQuerying", 3, "without a sort, snapshots come in identifier order",
            ["storeContract.unsortedFetchesFollowIdentifierOrder"]),
        ConformanceRule(
            "HistoryProviding", 1, "every committed save and batch is one transaction, exactly when it is stored",
            [
                "history.transactionsRecordEveryChange", "history.batchChangesAppearInHistory",
                "history.failedSavesRecordNothing",
            ]),
        ConformanceRule(
            "HistoryProviding", 2, "tokens increase, and a durable store keeps them and history across reopening",
            [
                "history.transactionsCarryAuthorAndOrder", "history.tokensResumeAfterReopen",
                "history.everyKindOfChangeKeepsItsHistoryAfterReopen",
                "history.everyDetailSurvivesReopenAndASecondStore",
            ]),
        ConformanceRule(
            "HistoryProviding", 3, "inserts under permanent identifiers, updates with changed properties, tombstones",
            [
                "history.transactionsRecordEveryChange", "history.tombstonesKeepPreservedValues",
                "history.equivalentValueChangesAreRecorded",
            ]),
        ConformanceRule(
            "HistoryProviding", 4, "a token into deleted history expires, never a silent gap",
            [
                "history.deletingHistoryExpiresTokens", "history.deletedHistoryStaysDeletedAfterReopen",
                "history.tokensFromBeforeEraseExpire",
            ]),
        ConformanceRule(
            "HistoryProviding", 5, "the saving context's author is recorded",
            ["history.transactionsCarryAuthorAndOrder"]),
    ]
}
