import Foundation
import ModelStore
import ModelStoreConformance
import ModelStoreInMemory
import Testing

/// How cases report: skips, expected failures, stale declarations, names, and cleanup.
struct ConformanceCaseTests {
    /// The in-memory adapter with other declarations.
    static func inMemory(
        capabilities: ConformanceCapabilities = [.erase], expectedFailures: [String: String] = [:]
    ) -> ConformanceAdapter {
        ConformanceAdapter(name: "InMemoryStore", capabilities: capabilities, expectedFailures: expectedFailures) { _ in
            InMemoryStoreConfiguration()
        }
    }

    static func testCase(_ id: String, of adapter: ConformanceAdapter) throws -> ConformanceCase {
        try #require(ConformanceSuite.cases(for: adapter).first { $0.id == id }, "no case '\(id)'")
    }

    @Test func caseIdentifiersAreUniqueAndNamedByGroup() {
        let ids = ConformanceSuite.caseIdentifiers
        #expect(Set(ids).count == ids.count)
        let groups = Set(ConformanceGroup.allCases.map(\.rawValue))
        #expect(ids.allSatisfy { groups.contains(String($0.prefix { $0 != "." })) })
        #expect(Set(ConformanceSuite.cases(for: Self.inMemory()).map(\.group)) == Set(ConformanceGroup.allCases))
    }

    @Test func groupsSelectCases() {
        let cases = ConformanceSuite.cases(for: Self.inMemory(), groups: [.uniqueness, .erase])
        #expect(!cases.isEmpty)
        #expect(cases.allSatisfy { $0.group == .uniqueness || $0.group == .erase })
    }

    @Test func missingCapabilityIsSkippedWithReason() throws {
        let testCase = try Self.testCase("persistence.reopenKeepsEverything", of: Self.inMemory())
        guard case .skipped(let reason) = try testCase.run() else {
            Issue.record("a case needing durability ran on an adapter without it")
            return
        }
        #expect(reason.contains("durability across reopen") && reason.contains("InMemoryStore"))
        #expect(testCase.description.contains("[skipped: needs durability across reopen"))
    }

    /// Stores the refusal check cannot apply to, with the words of the reason it is skipped for: one
    /// that is not a querying store, and a querying store that declares no filter kind.
    static let storesWithoutNativeFilters: [(name: String, reason: String)] = [
        ("not querying", "does not conform to DataStoreQuerying"), ("querying, no filters", "declare no filter kind"),
    ]

    @Test(arguments: storesWithoutNativeFilters)
    func checkThatDoesNotApplyIsSkippedWithReason(store: String, reason expected: String) throws {
        let adapter = ConformanceAdapter(name: store, capabilities: [.erase]) { _ in
            let configuration: any DataStoreConfiguration =
                store == "not querying"
                ? FallbackConfiguration(inner: InMemoryStoreConfiguration())
                : MutantStoreConfiguration(mutation: nil, queryCapabilities: QueryCapabilities.none)
            return configuration
        }
        let testCase = try Self.testCase("pushDown.nativeFiltersAreNotRefused", of: adapter)
        guard case .skipped(let reason) = try testCase.run() else {
            Issue.record("a check that cannot apply to the store '\(store)' passed silently")
            return
        }
        #expect(reason.contains(expected), "\(reason)")
    }

    @Test func nativeFilterKindsAreReadFromTheStore() throws {
        let adapter = ConformanceAdapter(name: "in memory", capabilities: [.erase]) { _ in
            InMemoryStoreConfiguration()
        }
        let testCase = try Self.testCase("pushDown.nativeFiltersAreNotRefused", of: adapter)
        let outcome = try testCase.run()
        guard case .passed = outcome else {
            Issue.record("every kind the in-memory store runs is checked, and none is refused: \(outcome)")
            return
        }
    }

    @Test func declaredFailureIsReportedAsExpected() throws {
        var adapter = MutationTests.adapter(.ignoresOffset, durable: false)
        adapter.expectedFailures = ["fetch.offsetAndLimit": "the offset is applied by a later release"]
        let testCase = try Self.testCase("fetch.offsetAndLimit", of: adapter)
        #expect(testCase.description.contains("[expected failure: the offset is applied by a later release]"))
        guard case .expectedFailure(let reason, let failure) = try testCase.run() else {
            Issue.record("a declared divergence was not reported as an expected failure")
            return
        }
        #expect(reason == "the offset is applied by a later release")
        #expect(failure.message.contains("offset ignored"))
        #expect(failure.caseID == "fetch.offsetAndLimit")
    }

    @Test func declaredGroupFailureCoversItsCases() throws {
        var adapter = MutationTests.adapter(.ignoresOffset, durable: false)
        adapter.expectedFailures = ["fetch": "windows are not done yet"]
        let outcome = try Self.testCase("fetch.offsetAndLimit", of: adapter).run()
        guard case .expectedFailure = outcome else {
            Issue.record("a group-level declaration did not cover its case: \(outcome)")
            return
        }
    }

    @Test func declaredFailureThatPassesFails() throws {
        let adapter = Self.inMemory(expectedFailures: ["crud.insertAndFetch": "thought to be broken"])
        let error = #expect(throws: ConformanceFailure.self) {
            try Self.testCase("crud.insertAndFetch", of: adapter).run()
        }
        #expect(error?.message.contains("remove 'crud.insertAndFetch' from expectedFailures") == true)
    }

    @Test func undeclaredFailureThrowsWithExpectedAndFound() throws {
        let error = #expect(throws: ConformanceFailure.self) {
            try Self.testCase("fetch.offsetAndLimit", of: MutationTests.adapter(.ignoresOffset, durable: false)).run()
        }
        #expect(error?.caseID == "fetch.offsetAndLimit")
        #expect(error?.message == "fetch with fetchOffset 2 returned the first item: offset ignored")
        #expect(error?.expected != nil && error?.found != nil)
        #expect(error?.description.contains("expected:") == true)
    }

    @Test func typoInDeclarationsFails() throws {
        let adapter = Self.inMemory(expectedFailures: ["fetch.offsetAndLimt": "typo"])
        let error = #expect(throws: ConformanceFailure.self) {
            try Self.testCase("declarations.expectedFailuresNameRealCases", of: adapter).run()
        }
        #expect(error?.found == "fetch.offsetAndLimt")
    }

    @Test func directoryIsRemovedEvenWhenTheCaseFails() throws {
        let seen = LockedValue<[URL]>([])
        let adapter = ConformanceAdapter(name: "broken", capabilities: [.erase]) { directory in
            seen.withLock { $0.append(directory) }
            return MutantStoreConfiguration(mutation: .ignoresOffset)
        }
        #expect(throws: ConformanceFailure.self) { try Self.testCase("fetch.offsetAndLimit", of: adapter).run() }
        let directories = seen.withLock { $0 }
        #expect(!directories.isEmpty)
        for directory in directories {
            #expect(!FileManager.default.fileExists(atPath: directory.path), "\(directory.path) was left behind")
        }
    }

    @Test func eachCaseGetsItsOwnDirectory() throws {
        let seen = LockedValue<Set<String>>([])
        let adapter = ConformanceAdapter(name: "memory", capabilities: [.erase]) { directory in
            seen.withLock { _ = $0.insert(directory.deletingLastPathComponent().path) }
            return InMemoryStoreConfiguration()
        }
        let cases = ConformanceSuite.cases(for: adapter, groups: [.crud])
        for testCase in cases { try testCase.run() }
        // One more directory: the one the suite makes a configuration in to read the store's type.
        #expect(seen.withLock { $0.count } == cases.count + 1)
    }

    @Test func errorsThatAreNotDataStoreErrorsAreCalledOut() throws {
        struct PlainError: Error {}
        let adapter = ConformanceAdapter(name: "throwing") { _ in throw PlainError() }
        let error = #expect(throws: ConformanceFailure.self) {
            try Self.testCase("crud.insertAndFetch", of: adapter).run()
        }
        #expect(error?.message.contains("not a DataStoreError") == true)
    }
}
