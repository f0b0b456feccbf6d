import Foundation
import ModelStore

/// Cases for the numbered rules no other group checks: thread safety of the store's own requirements
/// (`DataStore` 1), no models kept (`DataStore` 5), the asynchronous twins (`DataStoreAsynchronous`),
/// identifier order without a sort (`DataStoreQuerying` 3) and the write lock of a prepared save
/// (`DataStoreTwoPhaseSaving` 2).
enum ContractRuleCases {
    static let all: [CaseDefinition] = [
        CaseDefinition(
            .storeContract, "concurrentRequestsLoseNothing",
            "Saves, fetches and counts sent straight to the store from four threads at once lose no insert, share no "
                + "identifier and never see a save in part."
        ) { env in
            try StoreContractCases.withDriver(env) { try $0.checkConcurrentRequests() }
        },
        CaseDefinition(
            .contexts, "storeKeepsNoModels",
            "Once the contexts that saved and fetched them are gone, their models are freed while the store stays open."
        ) { env in
            let container = try env.openContainer()
            weak var weakModel: LogEntry?
            weak var weakContext: ModelContext?
            try {
                let context = ModelContext(container)
                let entry = LogEntry()
                entry.sequence = 1
                entry.label = "kept by nothing"
                context.insert(entry)
                try env.step("saving one entry") { try context.save() }
                let fetched = try env.step("fetching it back") { try context.fetch(FetchDescriptor<LogEntry>()) }
                entry.label = "changed"
                try env.step("saving a change to it") { try context.save() }
                weakModel = fetched.first
                weakContext = context
            }()
            try env.check(
                weakContext == nil && weakModel == nil,
                "a model (or its context) outlived every reference the test held while the store stayed open: "
                    + "the store keeps references to models or contexts (DataStore rule 5)")
            try env.checkEqual(try env.count(LogEntry.self, in: container), 1, "the saved entry is missing")
        },
        CaseDefinition(
            .storeContract, "unsortedFetchesFollowIdentifierOrder",
            "A querying store returns a fetch without a sort in identifier order, whatever order the models were "
                + "inserted, updated or reinserted in."
        ) { env in
            try StoreContractCases.withDriver(env) { try $0.checkUnsortedOrder() }
        },
        CaseDefinition(
            .graphIntegrity, "preparedSaveKeepsOtherSavesOut",
            "While a two-phase save is prepared, a save from another thread waits until it finishes.",
            requires: .twoPhaseSaves
        ) { env in
            try StoreContractCases.withDriver(env) { try $0.checkPreparedSaveHoldsTheLock() }
        },
        CaseDefinition(
            .storeContract, "asynchronousMatchesSynchronous",
            "An asynchronous store's async fetch, count, identifiers and save give what their synchronous twins give, "
                + "refusals included."
        ) { env in
            try StoreContractCases.withDriver(env) { try $0.checkAsynchronousTwins() }
        },
        CaseDefinition(
            .storeContract, "asynchronousCallsSuspend",
            "An asynchronous store's async fetches suspend while they wait, leaving their thread to other tasks."
        ) { env in
            try StoreContractCases.withDriver(env) { try $0.checkAsynchronousSuspension() }
        },
        CaseDefinition(
            .storeContract, "synchronousWorksFromAnyThread",
            "An asynchronous store's synchronous requirements work from a plain thread and from a task."
        ) { env in
            try StoreContractCases.withDriver(env) { try $0.checkSynchronousFromAnyThread() }
        },
    ]
}
