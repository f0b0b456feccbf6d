import Foundation
import ModelStore
import ModelStoreInMemory
import Testing

/// SwiftData's error names catch what ModelStore throws in the same situations, in `catch` clauses
/// written as a SwiftData app writes them.
struct SwiftDataErrorTests {
    typealias Descriptor = HistoryDescriptor<DefaultHistoryTransaction>

    /// Which of the names a thrown error matches, as a chain of `catch` clauses would try them.
    private func caught(by names: [SwiftDataError], _ body: () throws -> Void) -> [String] {
        do {
            try body()
            return []
        } catch {
            return names.filter { $0 ~= error }.map(\.name)
        }
    }

    @Test func aUniqueValueTakenIsAModelValidationFailure() throws {
        let container = try ModelContainer(for: Trip.self, configurations: .inMemory())
        let context = ModelContext(container)
        context.insert(Trip(name: "Lisbon"))
        try context.save()
        context.duplicateInsertPolicy = .error
        context.insert(Trip(name: "Lisbon"))
        var caughtAsSwiftData = false
        do {
            try context.save()
        } catch SwiftDataError.modelValidationFailure {
            caughtAsSwiftData = true
        } catch {
            Issue.record("not caught as modelValidationFailure: \(error)")
        }
        #expect(caughtAsSwiftData)
    }

    @Test func anExpiredTokenIsHistoryTokenExpiredAndNothingElse() throws {
        let container = try ModelContainer(for: Trip.self, configurations: InMemoryStoreConfiguration(historyLimit: 1))
        let context = ModelContext(container)
        for name in ["A", "B"] {
            context.insert(Trip(name: name))
            try context.save()
        }
        let kept = try context.fetchHistory(Descriptor())
        let first = DefaultHistoryToken(storeIdentifier: kept[0].storeIdentifier, transactionNumber: 1)
        let names = caught(by: [.historyTokenExpired, .unsupportedPredicate, .loadIssueModelContainer]) {
            _ = try context.fetchHistory(Descriptor(predicate: #Predicate { $0.token >= first }))
        }
        #expect(names == ["historyTokenExpired"])
    }

    @Test func aPredicateThatFailsOnAModelIsAnUnsupportedPredicate() throws {
        let container = try ModelContainer(for: Trip.self, configurations: .inMemory())
        let context = ModelContext(container)
        context.insert(Trip(name: "Lisbon"))
        try context.save()
        // The force unwrap fails on a trip without a destination, as it would in SwiftData.
        let names = caught(by: [.unsupportedPredicate, .modelValidationFailure, .historyTokenExpired]) {
            _ = try context.fetch(FetchDescriptor<Trip>(predicate: #Predicate { $0.destination!.city == "Porto" }))
        }
        #expect(names == ["unsupportedPredicate"])
    }

    @Test func theNamesForLimitsModelStoreDoesNotHaveCatchNothing() {
        let everyCode: [DataStoreError.Code] = [
            .unsupportedFeature, .invalidPredicate, .uniqueConstraintViolation, .denyRuleViolation,
            .relationshipCountViolation, .notFound, .corrupted, .locked, .conflict, .io, .invalidSchema,
            .invalidConfiguration, .invalidValue, .historyTokenExpired, .readOnly,
        ]
        for name in [
            SwiftDataError.includePendingChangesWithBatchSize, .sortingPendingChangesWithIdentifiers,
            .invalidTransactionFetchRequest, .configurationFileNameTooLong,
            .configurationFileNameContainsInvalidCharacters,
        ] {
            #expect(everyCode.allSatisfy { !(name ~= DataStoreError($0, "an error")) }, "\(name)")
            // A SwiftDataError thrown as itself is still caught by its own name.
            #expect(name ~= name)
        }
        #expect(!(SwiftDataError.loadIssueModelContainer ~= SwiftDataError.unknownSchema))
        #expect(SwiftDataError.loadIssueModelContainer ~= DataStoreError(.corrupted, "damaged"))
        #expect(SwiftDataError.backwardMigration.description == "SwiftDataError.backwardMigration")
    }
}
