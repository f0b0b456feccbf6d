import Foundation
import ModelStore
import ModelStoreAdapterKit
import ModelStoreTestSupport
import Testing

/// Predicates that cannot be evaluated, and key paths that are not stored, fail with
/// ``DataStoreError/invalidPredicate`` naming the culprit, the same way on every store; never a crash.
struct QueryErrorTests {
    func expectInvalid(
        _ harness: QueryHarness, _ predicate: Predicate<Reading>, mentioning parts: [String],
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        for way in FetchWay.allCases {
            let context = ModelContext(harness.container(way))
            do {
                _ = try context.fetch(FetchDescriptor(predicate: predicate))
                Issue.record("\(way): the fetch did not fail", sourceLocation: sourceLocation)
            } catch let error as DataStoreError {
                #expect(error.code == .invalidPredicate, "\(way): \(error)", sourceLocation: sourceLocation)
                for part in parts {
                    #expect(
                        error.message.contains(part), "\(way): '\(error.message)' does not mention '\(part)'",
                        sourceLocation: sourceLocation)
                }
            } catch {
                Issue.record("\(way): unexpected \(error)", sourceLocation: sourceLocation)
            }
        }
    }

    @Test func forceUnwrapOfNilNamesTheExpression() throws {
        let harness = try QueryHarness()
        expectInvalid(harness, #Predicate { $0.note! == "x" }, mentioning: ["'$0.note!'", "Reading(", "Found nil"])
        for way in FetchWay.allCases {
            let context = ModelContext(harness.container(way))
            let descriptor = FetchDescriptor<Reading>(predicate: #Predicate { $0.int > -100 && $0.note! == "x" })
            expectError(.invalidPredicate) { try context.fetchCount(descriptor) }
            expectError(.invalidPredicate) { try context.fetchIdentifiers(descriptor) }
            expectError(.invalidPredicate) { try context.enumerate(descriptor) { _ in } }
            expectError(.invalidPredicate) {
                try context.delete(model: Reading.self, where: #Predicate { $0.note! == "x" })
            }
            #expect(try context.fetchCount(FetchDescriptor<Reading>()) == QueryDataset.count)
        }
    }

    @Test func failedCastNamesTheExpression() throws {
        let harness = try QueryHarness()
        let cast = Predicate<Reading> { root in
            PredicateExpressions.build_Equal(
                lhs: PredicateExpressions.ForceCast<_, String>(
                    PredicateExpressions.build_KeyPath(root: root, keyPath: \.int)),
                rhs: PredicateExpressions.build_Arg("3"))
        }
        expectInvalid(harness, cast, mentioning: ["'($0.int as! String)'"])
    }

    @Test func guardedUnwrapsDoNotFailButUnguardedOnesDo() throws {
        let harness = try QueryHarness()
        let guarded = harness.expectAgreement("guarded") { _ in
            FetchDescriptor(predicate: #Predicate { $0.note != nil && $0.note! == "x" })
        }
        #expect(guarded.error == nil && !guarded.fetched.isEmpty)
        // The unwrap comes first, so Swift fails on the first nil even though a later condition excludes it.
        let unguarded = harness.expectAgreement("unguarded") { _ in
            FetchDescriptor(predicate: #Predicate { $0.note! == "x" && $0.note != nil })
        }
        #expect(unguarded.error == DataStoreError.Code.invalidPredicate.name)
    }

    @Test func keyPathsThatAreNotStoredAreReportedByName() throws {
        let harness = try QueryHarness()
        expectInvalid(
            harness, #Predicate { $0.scratch > 0 },
            mentioning: ["\\Reading.scratch", "'Reading'", "not a stored property"])
        expectInvalid(
            harness, #Predicate { $0.shout == "ROME" },
            mentioning: ["\\Reading.<computed String>", "not a stored property"])
        expectInvalid(
            harness, #Predicate { $0.station?.readings.isEmpty == false && $0.hasChanges }, mentioning: ["'Reading'"])
    }

    @Test func reversedConstantRangesAndOverflowsFailInsteadOfCrashing() throws {
        let harness = try QueryHarness()
        let low = 5
        let high = 1
        expectInvalid(harness, #Predicate { (low...high).contains($0.int) }, mentioning: ["'(5...1)'"])
        expectInvalid(harness, #Predicate { (low..<high).contains($0.int) }, mentioning: ["'(5..<1)'"])
        let big = Int.max
        expectInvalid(harness, #Predicate { $0.int > big + 1 }, mentioning: ["overflows"])
        let zero = 0
        expectInvalid(harness, #Predicate { $0.int > 10 / zero }, mentioning: ["divides by zero"])
    }

    @Test func snapshotEvaluatorRejectsUnknownPropertiesAndMissingResolvers() throws {
        let schema = Schema([Reading.self])
        let entity = try #require(schema.entity(named: "Reading"))
        expectError(.invalidPredicate) {
            try SnapshotEvaluator(filter: .equal("nope", .int(1)), entity: entity)
        }
        expectError(.invalidPredicate) {
            try SnapshotEvaluator(filter: .compare("station", .less, .int(1)), entity: entity, schema: schema)
        }
        expectError(.unsupportedFeature) {
            try SnapshotEvaluator(
                filter: .compare("station.name", .equal, .string("x")), entity: entity, schema: schema)
        }
        expectError(.invalidPredicate) {
            try SnapshotEvaluator(filter: .any("station", .constant(true)), entity: entity, schema: schema) { _ in nil }
        }
        do {
            _ = try SnapshotEvaluator(
                filter: .compare("tags.label", .equal, .string("x")), entity: entity, schema: schema
            ) { _ in nil }
            Issue.record("a path through a to-many relationship was accepted")
        } catch let error as DataStoreError {
            #expect(error.message.contains("to-many relationship 'Reading.tags'"))
        }
    }
}
