import Foundation
import ModelStore

/// One check of the suite, bound to one adapter: what a parameterized test receives.
///
/// ```swift
/// @Test(arguments: ConformanceSuite.cases(for: .myStore))
/// func conformance(_ testCase: ConformanceCase) throws {
///     try testCase.run()
/// }
/// ```
///
/// Its ``description`` is the case's identifier, followed by its declared status when it is not
/// expected to pass (`"persistence.reopenKeepsEverything [skipped: needs durability across reopen]"`),
/// so a test runner that names arguments by their description shows every skip and every known
/// divergence in the list of results, even before the case runs.
public struct ConformanceCase: Sendable, CustomStringConvertible, Identifiable {
    /// The case's identifier, `group.name`: stable, usable in ``ConformanceAdapter/expectedFailures``.
    public let id: String
    /// The group the case belongs to.
    public let group: ConformanceGroup
    /// The case's name within its group.
    public let name: String
    /// What the case checks, in one sentence.
    public let summary: String
    /// The capabilities the case needs; it is skipped for adapters that lack any of them.
    public let requirements: ConformanceCapabilities
    /// The adapter under test.
    public let adapter: ConformanceAdapter
    let body: @Sendable (CaseEnvironment) throws -> Void
    /// A reason to skip the case that does not depend on the adapter (for example, a ModelStore
    /// API the case needs has not shipped yet).
    let unavailableReason: String?
    /// What the suite reads from the adapter's store type, shared by the cases of one adapter.
    let storeType: StoreTypeReading

    init(
        definition: CaseDefinition, adapter: ConformanceAdapter, storeType: StoreTypeReading
    ) {
        self.id = "\(definition.group.rawValue).\(definition.name)"
        self.group = definition.group
        self.name = definition.name
        self.summary = definition.summary
        self.requirements = definition.requirements
        self.adapter = adapter
        self.body = definition.body
        self.unavailableReason = definition.unavailableReason
        self.storeType = storeType
    }

    /// The capabilities the case runs with: the ``ConformanceCapabilities/observable`` ones the
    /// store's type conforms to, and the others the adapter declares.
    ///
    /// The suite reads the store's type the first time a case of the adapter needs it (by making
    /// one configuration in a scratch directory; no store is opened). When the adapter cannot make
    /// a configuration, every observable capability counts as present, so the cases run and fail
    /// on the adapter's own error.
    public var capabilities: ConformanceCapabilities { storeType.capabilities }

    /// Why the case will be skipped, or `nil` if it will run.
    public var skipReason: String? {
        let missing = requirements.subtracting(capabilities)
        guard !missing.isEmpty else { return unavailableReason }
        var reasons: [String] = []
        let unobserved = missing.intersection(.observable)
        if !unobserved.isEmpty {
            let protocols = ObservableCapability.all.filter { unobserved.contains($0.capability) }.map(\.protocolName)
            reasons.append(
                "\(unobserved), which the store '\(storeType.value.storeName ?? adapter.name)' does not conform to "
                    + "(\(protocols.joined(separator: ", ")))")
        }
        let undeclared = missing.subtracting(.observable)
        if !undeclared.isEmpty {
            reasons.append("\(undeclared), which the adapter '\(adapter.name)' does not declare")
        }
        return "needs " + reasons.joined(separator: "; and ")
    }

    /// The reason the adapter declares this case as a known divergence, if it does.
    public var expectedFailureReason: String? {
        adapter.expectedFailureReason(for: id, group: group)
    }

    /// The identifier, with the declared status when the case is not expected to pass.
    public var description: String {
        if let skipReason { return "\(id) [skipped: \(skipReason)]" }
        if let expectedFailureReason { return "\(id) [expected failure: \(expectedFailureReason)]" }
        return id
    }

    /// Runs the case on a fresh store in its own temporary directory, and removes the directory
    /// afterwards, whether the case passes or fails.
    ///
    /// - Returns: ``ConformanceOutcome/passed``; ``ConformanceOutcome/skipped(reason:)`` when the
    ///   adapter lacks a capability the case needs (see ``capabilities``; nothing runs), or when the
    ///   store reports at run time that the check does not apply to it (for example, it leaves
    ///   uniqueness to the context); or
    ///   ``ConformanceOutcome/expectedFailure(reason:failure:)`` when the case failed and the
    ///   adapter declares that divergence.
    /// - Throws: ``ConformanceFailure`` when the case fails and no divergence is declared, and
    ///   also when a declared divergence *passes* (the declaration is stale and must be removed).
    ///   Errors the adapter throws unexpectedly are wrapped in a ``ConformanceFailure``.
    ///
    /// Why a return value and not only errors: the module links no test framework, so it cannot
    /// mark a test as skipped or as a known issue itself. Returning the outcome keeps a skip or
    /// an expected failure from ever looking like an ordinary pass to code that inspects it, while
    /// `try testCase.run()` alone stays a complete test (skips and expected failures are named in
    /// ``description``). The article "Running the conformance suite" shows the five lines that turn
    /// outcomes into Swift Testing's cancellations and known issues.
    @discardableResult
    public func run() throws -> ConformanceOutcome {
        if let skipReason { return .skipped(reason: skipReason) }
        let (failure, notApplicable) = execute()
        if let notApplicable { return .skipped(reason: notApplicable) }
        switch (failure, expectedFailureReason) {
        case (nil, nil):
            return .passed
        case (let failure?, let reason?):
            return .expectedFailure(reason: reason, failure: failure)
        case (let failure?, nil):
            throw failure
        case (nil, let reason?):
            throw ConformanceFailure(
                caseID: id,
                message: "the adapter declares this case as an expected failure ('\(reason)'), but it passed: "
                    + "remove '\(id)' from expectedFailures")
        }
    }

    /// Runs the body in a fresh directory; returns the failure, if any, or the reason the body
    /// found the case does not apply to this store.
    private func execute() -> (failure: ConformanceFailure?, skipped: String?) {
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("ModelStoreConformance-\(UUID().uuidString)", isDirectory: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        do {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            let environment = CaseEnvironment(
                caseID: id, adapter: adapter, capabilities: capabilities, directory: directory)
            try body(environment)
            return (nil, nil)
        } catch let skip as CaseNotApplicable {
            return (nil, skip.reason)
        } catch var failure as ConformanceFailure {
            failure.caseID = id
            return (failure, nil)
        } catch let error as DataStoreError {
            let failure = ConformanceFailure(
                caseID: id, message: "the case stopped on an error the adapter was not expected to throw",
                underlyingError: error)
            return (failure, nil)
        } catch {
            let failure = ConformanceFailure(
                caseID: id,
                message: "the case stopped on an error that is not a DataStoreError: "
                    + "adapters MUST map their errors to DataStoreError",
                underlyingError: ErrorDescription(error))
            return (failure, nil)
        }
    }
}

/// What running a case produced, when it did not fail.
///
/// A failing case throws ``ConformanceFailure`` instead, so a plain `try testCase.run()` fails
/// the test. Inspect the outcome to report skips and known divergences in a test framework's own
/// terms (see the article "Running the conformance suite").
public enum ConformanceOutcome: Sendable, CustomStringConvertible {
    /// The adapter did everything the case checks.
    case passed
    /// The case did not run: the adapter lacks a capability it needs, or the API it checks has not shipped.
    case skipped(reason: String)
    /// The case failed, and the adapter declares this divergence with the given reason.
    case expectedFailure(reason: String, failure: ConformanceFailure)

    /// `passed`, `skipped: reason`, or `expected failure: reason`.
    public var description: String {
        switch self {
        case .passed: "passed"
        case .skipped(let reason): "skipped: \(reason)"
        case .expectedFailure(let reason, _): "expected failure: \(reason)"
        }
    }
}

/// Thrown by a case body that finds, from what the store reports at run time, that it does not
/// apply (for example, a uniqueness check for a store that leaves uniqueness to the context).
struct CaseNotApplicable: Error {
    let reason: String
}

/// A non-Sendable error's description, kept as a Sendable error.
struct ErrorDescription: Error, Sendable, CustomStringConvertible {
    let description: String
    init(_ error: any Error) { description = "\(type(of: error)): \(error)" }
}
