import BenchHarness
import Foundation

/// The workloads: the main benchmarks' workloads that apply to a database server.
enum Workload: String, CaseIterable, Sendable {
    case insert
    case fetchIndexed = "fetch-indexed"
    case fetchUnique = "fetch-unique"
    case fetchScan = "fetch-scan"
    case updateOne = "update-one"
    case open
    case deleteAll = "delete-all"
}

/// Thrown by a system asked for a workload it does not do; reported as n/a with the reason.
struct NotApplicable: Error {
    let reason: String
    init(_ reason: String) { self.reason = reason }
}

/// Thrown when a system's result is wrong: the benchmark fails, it never becomes a number.
struct WrongResult: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// One benchmark ready to repeat: untimed preparation, the timed work, an untimed check.
///
/// Every system's timed work is awaited from the same task, so ModelStore's asynchronous API,
/// Fluent and PostgresNIO are called the same way; the synchronous ModelStore variant blocks that
/// task's thread, as a synchronous caller would.
struct Trial {
    /// The API path the timed work takes, for the report.
    let path: String
    /// Runs one repetition and returns its time in seconds.
    let repeatOnce: (_ repetition: Int) async throws -> Double
    /// Releases what the trial holds (connections, pools), after the last repetition.
    let finish: () async throws -> Void

    init<Output>(
        path: String, prepare: @escaping (_ repetition: Int) async throws -> Void = { _ in },
        run: @escaping (_ repetition: Int) async throws -> Output,
        check: @escaping (_ output: Output, _ repetition: Int) async throws -> Void,
        finish: @escaping () async throws -> Void = {}
    ) {
        self.path = path
        self.finish = finish
        repeatOnce = { repetition in
            try await prepare(repetition)
            let start = ContinuousClock.now
            let output = try await run(repetition)
            let elapsed = ContinuousClock.now - start
            try await check(output, repetition)
            return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) * 1e-18
        }
    }

    /// Repeats the trial under a policy and returns the times in seconds.
    func measure(_ policy: RepetitionPolicy) async throws -> [Double] {
        var samples: [Double] = []
        let start = ContinuousClock.now
        while policy.wantsMore(after: samples, elapsed: Self.seconds(since: start)) {
            samples.append(try await repeatOnce(samples.count))
        }
        return samples
    }

    private static func seconds(since start: ContinuousClock.Instant) -> Double {
        let elapsed = ContinuousClock.now - start
        return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) * 1e-18
    }
}

/// A system under test: a trial for each workload it does, over a data set, in a namespace of its own.
protocol BenchSystem: Sendable {
    /// Why the system does not do a workload, or `nil` if it does. Decided without data.
    func notApplicable(_ workload: Workload) -> String?
    /// The trial of a workload; the system's tables live in the PostgreSQL schema `namespace`.
    func trial(_ workload: Workload, data: Dataset, namespace: String) async throws -> Trial
}

/// Checks shared by every system.
enum Expect {
    static func count(_ actual: Int, _ expected: Int, _ what: String) throws {
        if actual != expected { throw WrongResult("\(what): got \(actual) results, expected \(expected)") }
    }

    /// `fetch-indexed`'s answer: every "Jane", sorted by age.
    static func indexed(names: [String], ages: [Int], of data: Dataset) throws {
        try count(names.count, data.indexedNameCount, "fetch-indexed")
        if names.contains(where: { $0 != Dataset.indexedName }) { throw WrongResult("fetch-indexed: wrong name") }
        if zip(ages, ages.dropFirst()).contains(where: { $0 > $1 }) {
            throw WrongResult("fetch-indexed: results are not sorted by age")
        }
    }

    /// `fetch-unique`'s answer: exactly the user with the repetition's email.
    static func unique(emails: [String], repetition: Int, of data: Dataset) throws {
        try count(emails.count, 1, "fetch-unique")
        if emails[0] != data.rows[data.lookupTarget(repetition)].email {
            throw WrongResult("fetch-unique: wrong user")
        }
    }

    /// `fetch-scan`'s answer: as many users as match, each of them matching.
    static func scan(_ rows: [UserRow], of data: Dataset) throws {
        try count(rows.count, data.scanMatchCount, "fetch-scan")
        if rows.contains(where: { !Dataset.matchesScan($0) }) {
            throw WrongResult("fetch-scan: a result does not match")
        }
    }
}
