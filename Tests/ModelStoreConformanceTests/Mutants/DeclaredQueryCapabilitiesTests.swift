import Foundation
import ModelStore
import ModelStoreConformance
import Testing

/// The suite reads what a store runs from the store's own `queryCapabilities`: a store that declares
/// less than everything passes, with the rest run in memory, and one that declares what it refuses fails,
/// naming its capabilities.
struct DeclaredQueryCapabilitiesTests {
    /// A store that runs less, declared honestly: its capabilities, and the mutant that refuses what
    /// they leave out (nothing refused for `nil`).
    struct Narrowed: Sendable, CustomTestStringConvertible {
        let name: String
        let capabilities: QueryCapabilities
        let refusing: Mutation?
        var testDescription: String { name }
    }

    static let narrowed: [Narrowed] = [
        Narrowed(name: "nothing native", capabilities: .none, refusing: nil),
        Narrowed(
            name: "no text filters, refusing them",
            capabilities: QueryCapabilities(
                filters: StoreFilter.Kinds.all.subtracting([.textContains, .textPrefix]), enforcesUniqueness: true),
            refusing: .refusesDeclaredTextFilters),
        Narrowed(
            name: "no to-one traversal, refusing it",
            capabilities: QueryCapabilities(
                filters: StoreFilter.Kinds.all.subtracting(.toOneTraversal), enforcesUniqueness: true),
            refusing: .refusesDeclaredToOneTraversal),
        Narrowed(
            name: "no sorting, refusing sorts",
            capabilities: QueryCapabilities(sorting: false, enforcesUniqueness: true), refusing: .refusesDeclaredSorts),
    ]

    static func adapter(_ mutation: Mutation?, capabilities: QueryCapabilities?) -> ConformanceAdapter {
        ConformanceAdapter(
            name:
                "MutantStore(\(mutation?.rawValue ?? "no mutation"), declaring \(capabilities.map(\.description) ?? "all"))",
            capabilities: [.erase]
        ) { _ in
            MutantStoreConfiguration(mutation: mutation, queryCapabilities: capabilities)
        }
    }

    @Test(arguments: narrowed)
    func storeDeclaringLessPassesTheSuite(_ narrowed: Narrowed) {
        let adapter = Self.adapter(narrowed.refusing, capabilities: narrowed.capabilities)
        for testCase in ConformanceSuite.cases(for: adapter) {
            if let failure = MutationTests.failure(of: testCase) {
                Issue.record(
                    Comment(
                        rawValue: "a store that declares only what it runs (\(narrowed.capabilities)) failed a case: "
                            + failure))
            }
        }
    }

    @Test(arguments: [Mutation.refusesDeclaredTextFilters, .refusesDeclaredToOneTraversal])
    func storeRefusingWhatItDeclaresFailsNamingItsCapabilities(_ mutation: Mutation) throws {
        let adapter = Self.adapter(mutation, capabilities: nil)
        let testCase = try #require(
            ConformanceSuite.cases(for: adapter).first { $0.id == "pushDown.nativeFiltersAreNotRefused" })
        let failure = #expect(throws: ConformanceFailure.self) { try testCase.run() }
        let message = failure?.description ?? ""
        #expect(message.contains("made only of filter kinds its queryCapabilities declare"), "\(message)")
        #expect(message.contains(QueryCapabilities.all.description), "\(message)")
        let refused = mutation == .refusesDeclaredTextFilters ? "title.contains(\"an\")" : "folder?.name == \"Alpha\""
        #expect(message.contains(refused), "\(message)")
    }
}
