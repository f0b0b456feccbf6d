import Foundation
import ModelStoreConformance
import Testing

/// The randomized differential case alone, on mutants of several kinds (values, updates, deletes,
/// relationships, sorts, windows): it must fail each with a shrunk reproduction, and pass the store
/// without a mutation. Alone it catches about a third of all mutants; the rest break what it does not
/// drive (history, migrations, identifiers, external storage) or need a step order a short run rarely
/// draws (a batch change followed by a reopen with no save between).
struct DifferentialCaseTests {
    static func differentialCase(_ mutation: Mutation?) throws -> ConformanceCase {
        let adapter = MutationTests.adapter(mutation, durable: mutation?.isDurable ?? true)
        return try #require(
            ConformanceSuite.cases(for: adapter).first { $0.id == "differential.randomOperationsMatchTheReference" })
    }

    @Test func passesTheStoreWithoutAMutation() throws {
        #expect(try Self.differentialCase(nil).run().description == "passed")
    }

    @Test(arguments: [
        Mutation.shiftsUpdates, .ignoresSortDirection, .nanStoredAsZero, .stringsCutAtNUL, .dropsRelationshipUpdates,
        .ignoresLimit, .dropsDeletes, .decimalsThroughDouble,
    ])
    func catchesTheMutantWithAShortReproduction(_ mutation: Mutation) throws {
        let failure = #expect(throws: ConformanceFailure.self) { try Self.differentialCase(mutation).run() }
        let message = failure?.message ?? ""
        #expect(message.contains("shortest reproduction"), "\(message)")
        let steps = message.split(separator: "\n").filter { $0.hasPrefix("  ") }.count
        #expect(steps >= 1 && steps <= 8, "the reproduction has \(steps) steps: \(message)")
    }
}
