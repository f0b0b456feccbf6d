import Foundation
import ModelStore
import ModelStoreConformance

/// One seeded bug of ``MutantStore``: a mistake a real adapter could ship with, filed under the
/// requirement of `DataStore`, `DataStoreQuerying` or `DataStoreBatching` it breaks.
///
/// The history mutants break the numbered rules of `HistoryProviding` (the store keeps history through
/// the adapter kit's `StoreHistory`, in its file). The durable test store keeps `.externalStorage`
/// values in files of their own and declares external storage, so the `externalStorage` group runs on it.
enum Mutation: String, CaseIterable, Sendable, CustomStringConvertible {
    // DataStore.save: minting and remapping (rule 3)
    case mintsTemporaryIdentifiers, mintsSameIdentifierTwice, mintsForAnotherStore
    case remapsNothingInInserted, remapsNothingInUpdated, remapsToOneOnly
    // DataStore rule 1: safe from any thread
    case racesBetweenReadAndWrite
    // DataStoreQuerying rule 3: identifier order without a sort
    case unsortedInWriteOrder
    // DataStoreQuerying rule 2: a superset only where the query allows inexact matches
    case approximatesUnasked
    // The value corpus: one realistic mistake per family
    case integersThroughDouble, nanStoredAsZero, subnormalsFlushedToZero, stringsCutAtNUL, byteOrderMarkStripped
    case datesToMicroseconds, largeDataCutAt64KiB, emptyStringStoredAsNil, arraysDeduplicated, urlsLowercased
    case membershipNeverMatchesNil, unsignedComparedAsSigned
    // Identity, history fidelity and multi-process access
    case mintsAfterLargestStored, eraseResetsKeys, historyKeptOnErase, historySkipsEquivalentValues
    case takesInOnlyInsertsFromOthers
    // DataStoreAsynchronous rules 1 and 2, DataStoreTwoPhaseSaving rules 1 to 4
    case asyncIgnoresWindow, asyncBlocksItsThread, syncRefusedInsideTasks
    case preparedSaveVisible, preparedSaveLetsOthersIn, commitAppliesNothing, abortKeepsCommittedPart
    // DataStore.save: what is stored (rule 2)
    case dropsUpdates, dropsDeletes, dropsInsertsAfterFirst, shiftsUpdates, swapsInsertedRows
    case dropsNilUpdates, dropsRelationshipUpdates, dropsToManyUpdates, dropsClearedReferences, cascadesEveryRule
    case skipsUpdatesEqualToStored, uniquenessCheckedOnInsertOnly
    case notAtomicOnUniqueViolation, acceptsUniqueViolations, uniquenessCaseInsensitive, compoundKeyJoined
    // DataStore.save: values round-tripping
    case normalizesStrings, dropsSignOfZero, truncatesDates, decimalsThroughDouble, clampsLargeUnsigned
    // DataStore.fetch (rule 4)
    case fetchServesValuesBeforeLastSave
    case mixesInOtherEntity, returnsFirstTwice, ignoresOffset, ignoresLimit, limitOffByOne
    case ignoresFilter, ignoresSort, ignoresSortDirection, sortsOnlyByFirstKey, reversesTies, nilsSortLast
    case caseInsensitiveSort, caseInsensitiveEquality, containsCaseInsensitive, prefixCaseInsensitive
    case sqlNullNotEqual, rangeAlwaysIncludesUpper, membershipIgnored, identifierFilterIgnored
    case nilRelationshipMatchesEverything, negationDropped, disjunctionAsConjunction
    // DataStore.fetchCount / fetchIdentifiers
    case countIgnoresWindow, countIgnoresFilter, countOffByOne
    case identifiersReversed, identifiersIgnoreWindow, identifiersIgnoreSort
    // DataStore.cachedSnapshots / erase
    case cacheReturnsStale, cacheReturnsDeleted, eraseKeepsLogEntries
    // DataStoreQuerying.queryCapabilities
    case refusesDeclaredTextFilters, refusesDeclaredToOneTraversal, refusesDeclaredSorts, inexactOrderingReturnsSubset
    // DataStoreBatching
    case batchDeleteIgnored, batchDeleteTooBroad, batchUpdateIgnored, batchUpdateAllOfEntity
    case batchUpdateNotAtomic, batchUpdateUnchecked, batchInsertIdentifiersReversed, batchInsertTemporaryIdentifiers
    case batchInsertNotAtomic, batchInsertStoresNothing, batchInsertKeepsEarlierChunks
    // Durability (over the file-backed store)
    case batchDeleteNotPersisted, batchUpdateNotPersisted, batchInsertNotPersisted
    case updatesPersistedOnlyWithInserts, deletesPersistedOnlyWithInserts, lastSaveLost
    case keyCounterNotPersisted, storeIdentifierNotPersisted, eraseNotPersisted, skipsWritingEqualUpdates
    case corruptionNotDetected, failedOpenOverwritesFile
    // Multi-process access (two stores over one shared file)
    case readsOtherStoresOnlyOnOpen, savesOverOtherStores
    // External storage (values in files of their own, beside the store's file)
    case externalValuesNotPersisted, externalValuesNeverReplaced, externalValuesTruncated
    case deleteRemovesEveryExternalValue
    // HistoryProviding rule 1: every committed change recorded, exactly when it is stored
    case historySavesNotRecorded, historyBatchesNotRecorded, historyRecordsFailedSaves, historyBatchesRecordOneChange
    case historyOfBatchesNotPersisted
    // HistoryProviding rule 2: increasing tokens, kept across reopening
    case historyTokensRepeat, historyTokenNotReported, historyLostOnReopen, historyCountersNotPersisted
    // HistoryProviding rule 3: what a transaction lists
    case historyInsertsUnderTemporaryIdentifiers, historyUpdatesListEveryProperty, historyUpdatesNameTheNextProperty
    case historyTombstonesEmpty
    case historyTombstonesKeepEverything
    // HistoryProviding rule 4: deleting history expires tokens
    case historyDeleteDoesNotExpireTokens, historyDeleteRemovesEverything, historyDeleteRemovesOnlyTheOldest
    case historyDeleteNotPersisted
    // HistoryProviding rule 5: the author
    case historyAuthorDropped
    // HistoryProviding.fetchHistory: the descriptor
    case historyIgnoresFetchLimit, historyIgnoresSort, historyIgnoresPredicate, historyNewestFirst
    // Migrations (SchemaMigrationStorage and the store's open)
    case migrationPlanIgnored, migrationDropsDidMigrate, migrationDropsWillMigrate, migrationFailureOpensAnyway
    case migrationFailureLeavesPartialState, migrationDryRunWrites, migrationVersionNotRecorded
    case migrationLosesRenamedValues

    var description: String { rawValue }

    /// The requirement the mutant breaks.
    var requirement: String {
        switch self {
        case .mintsTemporaryIdentifiers, .mintsSameIdentifierTwice, .mintsForAnotherStore, .remapsNothingInInserted,
            .remapsNothingInUpdated, .remapsToOneOnly:
            "DataStore.save (identifiers)"
        case .integersThroughDouble, .nanStoredAsZero, .subnormalsFlushedToZero, .stringsCutAtNUL,
            .byteOrderMarkStripped, .datesToMicroseconds, .largeDataCutAt64KiB, .emptyStringStoredAsNil,
            .arraysDeduplicated, .urlsLowercased:
            "value corpus (round trip)"
        case .membershipNeverMatchesNil, .unsignedComparedAsSigned: "value corpus (operators)"
        case .mintsAfterLargestStored, .eraseResetsKeys: "identity (identifiers never reused)"
        case .historyKeptOnErase: "HistoryProviding 4 (deleted history expires tokens)"
        case .historySkipsEquivalentValues: "HistoryProviding 3 (inserts, updated properties, tombstones)"
        case .takesInOnlyInsertsFromOthers: "multi-process access (two stores, one file)"
        case .asyncIgnoresWindow: "DataStoreAsynchronous 1 (as the synchronous twin)"
        case .asyncBlocksItsThread: "DataStoreAsynchronous 2 (suspends, never blocks)"
        case .syncRefusedInsideTasks: "DataStoreAsynchronous 3 (synchronous calls from any thread)"
        case .preparedSaveVisible: "DataStoreTwoPhaseSaving 1 (prepare changes nothing visible)"
        case .preparedSaveLetsOthersIn: "DataStoreTwoPhaseSaving 2 (other saves kept out)"
        case .commitAppliesNothing: "DataStoreTwoPhaseSaving 3 (commit applies the part)"
        case .abortKeepsCommittedPart: "DataStoreTwoPhaseSaving 4 (abort restores)"
        case .racesBetweenReadAndWrite: "DataStore 1 (safe to call from any thread)"
        case .unsortedInWriteOrder: "DataStoreQuerying 3 (identifier order without a sort)"
        case .approximatesUnasked: "DataStoreQuerying 2 (exact unless inexact matches are allowed)"
        case .dropsUpdates, .dropsDeletes, .dropsInsertsAfterFirst, .shiftsUpdates, .swapsInsertedRows,
            .dropsNilUpdates, .dropsRelationshipUpdates, .dropsToManyUpdates, .dropsClearedReferences,
            .cascadesEveryRule, .skipsUpdatesEqualToStored, .uniquenessCheckedOnInsertOnly, .notAtomicOnUniqueViolation,
            .acceptsUniqueViolations, .uniquenessCaseInsensitive, .compoundKeyJoined:
            "DataStore.save (changes)"
        case .normalizesStrings, .dropsSignOfZero, .truncatesDates, .decimalsThroughDouble, .clampsLargeUnsigned:
            "DataStore.save (values)"
        case .fetchServesValuesBeforeLastSave, .mixesInOtherEntity, .returnsFirstTwice, .ignoresOffset, .ignoresLimit,
            .limitOffByOne, .ignoresFilter,
            .ignoresSort, .ignoresSortDirection, .sortsOnlyByFirstKey, .reversesTies, .nilsSortLast,
            .caseInsensitiveSort, .caseInsensitiveEquality, .containsCaseInsensitive, .prefixCaseInsensitive,
            .sqlNullNotEqual, .rangeAlwaysIncludesUpper, .membershipIgnored, .identifierFilterIgnored,
            .nilRelationshipMatchesEverything, .negationDropped, .disjunctionAsConjunction:
            "DataStore.fetch"
        case .countIgnoresWindow, .countIgnoresFilter, .countOffByOne: "DataStore.fetchCount"
        case .identifiersReversed, .identifiersIgnoreWindow, .identifiersIgnoreSort: "DataStore.fetchIdentifiers"
        case .cacheReturnsStale, .cacheReturnsDeleted: "DataStore.cachedSnapshots"
        case .eraseKeepsLogEntries: "DataStore.erase"
        case .refusesDeclaredTextFilters, .refusesDeclaredToOneTraversal, .refusesDeclaredSorts,
            .inexactOrderingReturnsSubset:
            "DataStoreQuerying.queryCapabilities"
        case .batchDeleteIgnored, .batchDeleteTooBroad: "DataStoreBatching.delete"
        case .batchUpdateIgnored, .batchUpdateAllOfEntity, .batchUpdateNotAtomic, .batchUpdateUnchecked:
            "DataStoreBatching.update"
        case .batchInsertIdentifiersReversed, .batchInsertTemporaryIdentifiers, .batchInsertNotAtomic,
            .batchInsertStoresNothing, .batchInsertKeepsEarlierChunks:
            "DataStoreBatching.insert"
        case .batchDeleteNotPersisted, .batchUpdateNotPersisted, .batchInsertNotPersisted,
            .updatesPersistedOnlyWithInserts, .deletesPersistedOnlyWithInserts, .lastSaveLost, .keyCounterNotPersisted,
            .storeIdentifierNotPersisted, .eraseNotPersisted, .skipsWritingEqualUpdates:
            "durability (save, batches, erase across reopen)"
        case .corruptionNotDetected, .failedOpenOverwritesFile: "DataStore.init (failed opens)"
        case .readsOtherStoresOnlyOnOpen, .savesOverOtherStores: "multi-process access (two stores, one file)"
        case .externalValuesNotPersisted, .externalValuesNeverReplaced, .externalValuesTruncated,
            .deleteRemovesEveryExternalValue:
            "external storage (values in files of their own)"
        case .historySavesNotRecorded, .historyBatchesNotRecorded, .historyRecordsFailedSaves,
            .historyBatchesRecordOneChange, .historyOfBatchesNotPersisted:
            "HistoryProviding 1 (every change recorded, exactly when stored)"
        case .historyTokensRepeat, .historyTokenNotReported, .historyLostOnReopen, .historyCountersNotPersisted:
            "HistoryProviding 2 (increasing tokens, kept across reopening)"
        case .historyInsertsUnderTemporaryIdentifiers, .historyUpdatesListEveryProperty,
            .historyUpdatesNameTheNextProperty, .historyTombstonesEmpty, .historyTombstonesKeepEverything:
            "HistoryProviding 3 (inserts, updated properties, tombstones)"
        case .historyDeleteDoesNotExpireTokens, .historyDeleteRemovesEverything, .historyDeleteRemovesOnlyTheOldest,
            .historyDeleteNotPersisted:
            "HistoryProviding 4 (deleted history expires tokens)"
        case .historyAuthorDropped: "HistoryProviding 5 (author)"
        case .historyIgnoresFetchLimit, .historyIgnoresSort, .historyIgnoresPredicate, .historyNewestFirst:
            "HistoryProviding.fetchHistory (predicate, sort, limit)"
        case .migrationPlanIgnored, .migrationDropsDidMigrate, .migrationDropsWillMigrate,
            .migrationFailureOpensAnyway, .migrationFailureLeavesPartialState, .migrationVersionNotRecorded,
            .migrationLosesRenamedValues:
            "migrations (SchemaMigrationStorage, stages on open)"
        case .migrationDryRunWrites: "DataStoreMigrationPreviewing (dry run)"
        }
    }

    /// Every requirement, in report order.
    static let requirements: [String] = {
        var seen: [String] = []
        for mutation in allCases where !seen.contains(mutation.requirement) { seen.append(mutation.requirement) }
        return seen
    }()

    /// Whether the mutant needs the file-backed store (its bug is in what reaches the disk).
    var isDurable: Bool {
        requirement.hasPrefix("durability") || requirement.hasPrefix("DataStore.init")
            || requirement.hasPrefix("external storage") || requirement.hasPrefix("HistoryProviding")
            || requirement.hasPrefix("migrations") || requirement.hasPrefix("DataStoreMigrationPreviewing") || isShared
    }
    /// Whether the mutant needs a file shared by two stores.
    var isShared: Bool { requirement.hasPrefix("multi-process") }

    /// Words the failure that kills the mutant must contain: the symptom, named as an adapter author
    /// would look for it, and pointing at the right cause.
    var symptom: String {
        switch self {
        case .integersThroughDouble, .nanStoredAsZero, .subnormalsFlushedToZero, .stringsCutAtNUL,
            .byteOrderMarkStripped, .datesToMicroseconds, .largeDataCutAt64KiB, .emptyStringStoredAsNil,
            .arraysDeduplicated, .urlsLowercased:
            "did not round-trip exactly"
        case .membershipNeverMatchesNil, .unsignedComparedAsSigned: "not applied exactly"
        case .mintsAfterLargestStored, .eraseResetsKeys: "identifier reused"
        case .historyKeptOnErase: "silent gap"
        case .historySkipsEquivalentValues: "not recorded as Swift sees it"
        case .takesInOnlyInsertsFromOthers: "did not see the first store's save"
        case .asyncIgnoresWindow: "the asynchronous fetch returned other models"
        case .asyncBlocksItsThread: "block their thread instead of suspending"
        // Run inside a task (as Swift Testing runs a test), every case's save throws; on a thread of its
        // own only synchronousWorksFromAnyThread's task does. Either failure says the save threw.
        case .syncRefusedInsideTasks: "threw"
        case .preparedSaveVisible: "fetches saw a prepared save"
        case .preparedSaveLetsOthersIn: "while a two-phase save was prepared"
        case .commitAppliesNothing: "did not store the prepared save"
        case .abortKeepsCommittedPart: "abort after commit did not restore"
        case .racesBetweenReadAndWrite: "not safe to call from any thread"
        case .unsortedInWriteOrder: "did not return identifier order"
        case .mintsTemporaryIdentifiers: "temporary identifiers"
        case .mintsSameIdentifierTwice: "the same identifier for two"
        case .mintsForAnotherStore: "do not carry the store's identifier"
        case .remapsNothingInInserted, .remapsToOneOnly, .remapsNothingInUpdated: "not remapped"
        case .dropsUpdates, .dropsNilUpdates: "update"
        case .dropsDeletes: "delete ignored"
        case .dropsInsertsAfterFirst: "models lost"
        case .shiftsUpdates, .swapsInsertedRows: "another model's row"
        case .dropsRelationshipUpdates, .dropsToManyUpdates: "relationship update dropped"
        case .dropsClearedReferences: "references to deleted models"
        case .cascadesEveryRule: "delete rule applied wrongly"
        case .skipsUpdatesEqualToStored, .skipsWritingEqualUpdates: "equal by Swift's == "
        case .uniquenessCheckedOnInsertOnly, .batchUpdateUnchecked: "unique constraint not enforced"
        case .fetchServesValuesBeforeLastSave: "update dropped"
        case .notAtomicOnUniqueViolation: "not atomic"
        case .acceptsUniqueViolations: "unique constraint not enforced"
        case .compoundKeyJoined: "join into the same text"
        case .uniquenessCaseInsensitive: "case-sensitive"
        case .normalizesStrings, .dropsSignOfZero: "normalized"
        case .truncatesDates, .decimalsThroughDouble, .clampsLargeUnsigned: "round-trip exactly"
        case .mixesInOtherEntity: "wrong entity"
        case .returnsFirstTwice: "returned it twice"
        case .ignoresOffset: "offset ignored"
        case .ignoresLimit, .limitOffByOne: "limit ignored"
        case .ignoresFilter: "wrong entries"
        case .ignoresSort, .ignoresSortDirection, .sortsOnlyByFirstKey, .caseInsensitiveSort, .nilsSortLast:
            "wrong order"
        case .reversesTies: "unstable sort"
        case .caseInsensitiveEquality, .containsCaseInsensitive, .inexactOrderingReturnsSubset:
            "push-down changed a result"
        case .prefixCaseInsensitive, .sqlNullNotEqual, .rangeAlwaysIncludesUpper, .membershipIgnored,
            .nilRelationshipMatchesEverything, .negationDropped, .disjunctionAsConjunction:
            "applied exactly"
        case .identifierFilterIgnored: "by identifier returned other entries"
        case .countIgnoresWindow, .countIgnoresFilter, .countOffByOne: "count disagrees with fetch"
        case .identifiersReversed, .identifiersIgnoreWindow, .identifiersIgnoreSort: "another order"
        case .cacheReturnsStale: "stale snapshot"
        case .cacheReturnsDeleted: "returned a deleted model"
        case .eraseKeepsLogEntries: "erase incomplete"
        case .refusesDeclaredTextFilters, .refusesDeclaredToOneTraversal, .refusesDeclaredSorts:
            "queryCapabilities declare it"
        case .batchDeleteIgnored, .batchDeleteTooBroad: "delete ignored or too broad"
        case .batchUpdateIgnored, .batchUpdateAllOfEntity: "update dropped or too broad"
        case .batchUpdateNotAtomic: "batch update was not atomic"
        case .batchInsertIdentifiersReversed: "leads to the wrong model"
        case .batchInsertTemporaryIdentifiers: "temporary or repeated identifiers"
        case .batchInsertNotAtomic: "batch insert was not atomic"
        case .batchInsertStoresNothing: "rows lost"
        case .batchInsertKeepsEarlierChunks: "across chunks was not atomic"
        case .batchDeleteNotPersisted, .deletesPersistedOnlyWithInserts: "delete was lost on reopen"
        case .batchUpdateNotPersisted: "change was lost on reopen"
        case .updatesPersistedOnlyWithInserts: "lost on reopen"
        case .batchInsertNotPersisted, .lastSaveLost: "data lost on reopen"
        case .keyCounterNotPersisted: "key counter lost on reopen"
        case .storeIdentifierNotPersisted: "store identifier lost on reopen"
        case .eraseNotPersisted: "erase not durable"
        case .corruptionNotDetected: "corruption not detected"
        case .failedOpenOverwritesFile: "a failed open MUST NOT write"
        case .readsOtherStoresOnlyOnOpen: "did not see the first store's save"
        case .savesOverOtherStores: "lost saves"
        case .externalValuesNotPersisted, .externalValuesNeverReplaced, .externalValuesTruncated:
            "came back different after reopening"
        case .deleteRemovesEveryExternalValue: "changed when another was deleted"
        case .historySavesNotRecorded: "does not hold exactly one transaction"
        case .historyBatchesNotRecorded: "did not record three transactions"
        case .historyRecordsFailedSaves: "a failed save recorded a transaction"
        case .historyBatchesRecordOneChange: "does not list exactly the inserted models"
        case .historyTokensRepeat: "tokens do not increase"
        case .historyTokenNotReported: "history token is not the recorded transaction's token"
        case .historyLostOnReopen: "did not survive reopening"
        case .historyCountersNotPersisted: "how far history was deleted was not persisted"
        case .historyInsertsUnderTemporaryIdentifiers: "under their permanent identifiers"
        case .historyUpdatesListEveryProperty, .historyUpdatesNameTheNextProperty: "exactly the attribute that changed"
        case .historyOfBatchesNotPersisted: "history of a kind of change was not persisted"
        case .migrationLosesRenamedValues: "did not carry 'reading' into 'value'"
        case .historyTombstonesEmpty: "last .preserveValueOnDeletion value"
        case .historyTombstonesKeepEverything: "not marked .preserveValueOnDeletion"
        case .historyDeleteDoesNotExpireTokens: "silent gap"
        case .historyDeleteRemovesEverything: "deleted a transaction its descriptor did not select"
        case .historyDeleteRemovesOnlyTheOldest: "left transactions its descriptor selected"
        case .historyDeleteNotPersisted: "the delete was not persisted"
        case .historyAuthorDropped: "authors"
        case .approximatesUnasked: "unless it allows inexact matches"
        case .historyIgnoresFetchLimit, .historyIgnoresSort: "newest first, with a limit of 2"
        case .historyIgnoresPredicate: "a predicate on the author"
        case .historyNewestFirst: "oldest first"
        case .migrationPlanIgnored: "ignores the plan"
        case .migrationDropsDidMigrate: "didMigrate's changes were not stored"
        case .migrationDropsWillMigrate: "did not see the old and the new data"
        case .migrationFailureOpensAnyway: "name the failing stage"
        case .migrationFailureLeavesPartialState: "a failed migration changed the store's files"
        case .migrationDryRunWrites: "dry run"
        case .migrationVersionNotRecorded: "did not record the version it migrated to"
        }
    }

    /// Why the mutant may survive the suite and that is acceptable; `nil` for a mutant the suite MUST kill.
    ///
    /// No mutant survives today, so none is listed. A mutant that the suite cannot kill, and that is
    /// acceptable (its bug is invisible to every user, say), gets a `case` here with the reason; any other
    /// survivor fails `suiteKillsTheMutants`.
    var acceptableSurvival: String? {
        switch self {
        default: nil
        }
    }

    /// The groups most likely to kill the mutant, run first to keep the run short (every group runs
    /// before a mutant is declared a survivor, so the order changes only the time, never the verdict).
    var focus: [ConformanceGroup] {
        switch requirement {
        case "DataStore.save (identifiers)": [.storeContract, .identifiers]
        case "DataStore 1 (safe to call from any thread)": [.storeContract, .contexts]
        case let name where name.hasPrefix("DataStoreAsynchronous"): [.storeContract]
        case let name where name.hasPrefix("DataStoreTwoPhaseSaving"): [.graphIntegrity]
        case "identity (identifiers never reused)": [.identifiers, .persistence]
        case "value corpus (round trip)", "value corpus (operators)": [.values]
        case "DataStoreQuerying 3 (identifier order without a sort)": [.storeContract]
        case "DataStoreQuerying 2 (exact unless inexact matches are allowed)": [.storeContract]
        case "DataStore.save (changes)": [.crud, .storeContract, .relationships, .uniqueness]
        case "DataStore.save (values)": [.storeContract, .crud]
        case "DataStore.fetch", "DataStore.fetchCount", "DataStore.fetchIdentifiers": [.storeContract, .fetch]
        case "DataStore.cachedSnapshots": [.storeContract, .contexts]
        case "DataStore.erase": [.erase]
        case "DataStoreQuerying.queryCapabilities": [.declarations, .pushDown]
        case "multi-process access (two stores, one file)": [.multiProcess]
        case "external storage (values in files of their own)": [.externalStorage]
        case let name where name.hasPrefix("DataStoreBatching"): [.batch]
        case let name where name.hasPrefix("HistoryProviding"): [.history]
        case let name where name.hasPrefix("migrations") || name.hasPrefix("DataStoreMigrationPreviewing"):
            [.migrations]
        default: [.persistence, .erase]
        }
    }
}
