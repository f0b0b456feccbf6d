import BenchHarness
import Foundation

/// The workloads every system runs (`Catalog.workloads` names them in report order).
enum Workload: String, CaseIterable, Sendable {
    case insert
    case fetchIndexed = "fetch-indexed"
    case fetchUnique = "fetch-unique"
    case fetchScan = "fetch-scan"
    /// Every model or record of a store of N, with no predicate: what making N models costs.
    case fetchAll = "fetch-all"
    case updateOne = "update-one"
    /// `update-one` with a live query over every model open on the main context: the save plus
    /// the query's update, so `update-live − update-one` is the live query's work.
    case updateLive = "update-live"
    case open
    case openPage = "open-page"
    case deleteAll = "delete-all"
    /// Every model of a store of N held as a three-level class hierarchy, fetched as the root class.
    case hierarchyBase = "hierarchy-base"
    /// The same N rows as one flat model with every column, fetched whole: what `hierarchy-base` is compared with.
    case hierarchyFlat = "hierarchy-flat"
    /// One leaf subclass of the hierarchy (a quarter of the rows) fetched as itself.
    case hierarchySubclass = "hierarchy-subclass"

    /// Whether the workload is one of the class-hierarchy family, which only ModelStore's adapters run.
    var isHierarchy: Bool { [.hierarchyBase, .hierarchyFlat, .hierarchySubclass].contains(self) }

    /// Why a system that stores no ModelStore models cannot run the class-hierarchy workloads.
    static let hierarchyNotApplicable = "the class-hierarchy workloads compare two ModelStore entities"
}

/// Thrown by a system asked for a workload it cannot do; reported as n/a with the reason.
struct NotApplicable: Error {
    let reason: String
    init(_ reason: String) { self.reason = reason }
}

/// Thrown when a system's result is wrong: the benchmark is reported as failed, never as a number.
struct WrongResult: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// One benchmark, ready to repeat: untimed preparation, the timed work, an untimed check.
struct Trial {
    /// The API path the timed work takes, for the report.
    let path: String
    /// Runs one repetition and returns its time in seconds.
    let repeatOnce: (_ repetition: Int) throws -> Double
    /// Measures, untimed, the memory the system holds doing the trial's work beyond the caller's
    /// own objects; `nil` for trials that do not measure it.
    var memoryProbe: (() throws -> HeldMemory)?

    /// A trial.
    /// - Parameters:
    ///   - prepare: runs before every repetition, untimed (fresh stores, fresh contexts, targets).
    ///   - run: the timed work; what it returns is kept alive until the clock has stopped.
    ///   - check: verifies the output, untimed; throw ``WrongResult`` when it is wrong.
    init<Output>(
        path: String, prepare: @escaping (_ repetition: Int) throws -> Void = { _ in },
        run: @escaping (_ repetition: Int) throws -> Output,
        check: @escaping (_ output: Output, _ repetition: Int) throws -> Void
    ) {
        self.path = path
        repeatOnce = { repetition in
            try prepare(repetition)
            var output: Output?
            let start = ContinuousClock.now
            output = try run(repetition)
            let elapsed = ContinuousClock.now - start
            try check(output!, repetition)
            output = nil
            return Self.seconds(elapsed)
        }
    }

    private static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) * 1e-18
    }

    /// Repeats the trial under a policy and returns the times in seconds.
    func measure(_ policy: RepetitionPolicy) throws -> [Double] {
        var samples: [Double] = []
        var total = 0.0
        let start = ContinuousClock.now
        while policy.wantsMore(count: samples.count, total: total, elapsed: Self.seconds(ContinuousClock.now - start)) {
            samples.append(try repeatOnce(samples.count))
            total += samples[samples.count - 1]
        }
        return samples
    }
}

/// What a store holds of the memory a workload takes, the caller's objects left out (``Trial/memoryProbe``).
struct HeldMemory {
    /// The resident growth of making the caller's objects alone.
    var objects: Int
    /// The peak resident growth of the work, objects included.
    var peak: Int
    /// The resident growth when the work returned, objects included.
    var afterwards: Int
}

/// A system under test: builds a trial for each workload it can do over a data set.
///
/// Each workload method gets the data and this benchmark's own empty scratch directory. A
/// workload the system does not implement throws ``NotApplicable`` with ``notApplicable(_:)``'s reason.
protocol BenchSystem {
    /// Why the system cannot do a workload, or `nil` if it can. Decided without data.
    func notApplicable(_ workload: Workload) -> String?
    func insert(_ data: Dataset, _ directory: URL) throws -> Trial
    func fetchIndexed(_ data: Dataset, _ directory: URL) throws -> Trial
    func fetchUnique(_ data: Dataset, _ directory: URL) throws -> Trial
    func fetchScan(_ data: Dataset, _ directory: URL) throws -> Trial
    func fetchAll(_ data: Dataset, _ directory: URL) throws -> Trial
    func updateOne(_ data: Dataset, _ directory: URL) throws -> Trial
    func updateLive(_ data: Dataset, _ directory: URL) throws -> Trial
    func open(_ data: Dataset, _ directory: URL) throws -> Trial
    /// Opens a store of N from disk and fetches the first page of 20 sorted by the indexed `name`.
    func openPage(_ data: Dataset, _ directory: URL) throws -> Trial
    func deleteAll(_ data: Dataset, _ directory: URL) throws -> Trial
    /// Fetches every model of a store holding the hierarchy's N rows, as the root class.
    func hierarchyBase(_ data: Dataset, _ directory: URL) throws -> Trial
    /// Fetches every model of a store holding the same N rows as one flat model.
    func hierarchyFlat(_ data: Dataset, _ directory: URL) throws -> Trial
    /// Fetches one leaf subclass's models from a store holding the hierarchy's N rows.
    func hierarchySubclass(_ data: Dataset, _ directory: URL) throws -> Trial
}

extension BenchSystem {
    /// The trial for a workload.
    func trial(_ workload: Workload, data: Dataset, directory: URL) throws -> Trial {
        if let reason = notApplicable(workload) { throw NotApplicable(reason) }
        switch workload {
        case .insert: return try insert(data, directory)
        case .fetchIndexed: return try fetchIndexed(data, directory)
        case .fetchUnique: return try fetchUnique(data, directory)
        case .fetchScan: return try fetchScan(data, directory)
        case .fetchAll: return try fetchAll(data, directory)
        case .updateOne: return try updateOne(data, directory)
        case .updateLive: return try updateLive(data, directory)
        case .open: return try open(data, directory)
        case .openPage: return try openPage(data, directory)
        case .deleteAll: return try deleteAll(data, directory)
        case .hierarchyBase: return try hierarchyBase(data, directory)
        case .hierarchyFlat: return try hierarchyFlat(data, directory)
        case .hierarchySubclass: return try hierarchySubclass(data, directory)
        }
    }

    func notApplicable(_ workload: Workload) -> String? {
        if workload.isHierarchy { return Workload.hierarchyNotApplicable }
        return workload == .updateLive ? "live queries are ModelStore's (LiveQuery)" : nil
    }

    private func unsupported(_ workload: Workload) -> NotApplicable {
        NotApplicable(notApplicable(workload) ?? "not implemented for this system")
    }

    func insert(_ data: Dataset, _ directory: URL) throws -> Trial { throw unsupported(.insert) }
    func fetchIndexed(_ data: Dataset, _ directory: URL) throws -> Trial { throw unsupported(.fetchIndexed) }
    func fetchUnique(_ data: Dataset, _ directory: URL) throws -> Trial { throw unsupported(.fetchUnique) }
    func fetchScan(_ data: Dataset, _ directory: URL) throws -> Trial { throw unsupported(.fetchScan) }
    func fetchAll(_ data: Dataset, _ directory: URL) throws -> Trial { throw unsupported(.fetchAll) }
    func updateOne(_ data: Dataset, _ directory: URL) throws -> Trial { throw unsupported(.updateOne) }
    func updateLive(_ data: Dataset, _ directory: URL) throws -> Trial { throw unsupported(.updateLive) }
    func open(_ data: Dataset, _ directory: URL) throws -> Trial { throw unsupported(.open) }
    func openPage(_ data: Dataset, _ directory: URL) throws -> Trial { throw unsupported(.openPage) }
    func deleteAll(_ data: Dataset, _ directory: URL) throws -> Trial { throw unsupported(.deleteAll) }
    func hierarchyBase(_ data: Dataset, _ directory: URL) throws -> Trial { throw unsupported(.hierarchyBase) }
    func hierarchyFlat(_ data: Dataset, _ directory: URL) throws -> Trial { throw unsupported(.hierarchyFlat) }
    func hierarchySubclass(_ data: Dataset, _ directory: URL) throws -> Trial {
        throw unsupported(.hierarchySubclass)
    }
}

/// Checks shared by every system.
enum Expect {
    static func count(_ actual: Int, _ expected: Int, _ what: String) throws {
        if actual != expected { throw WrongResult("\(what): got \(actual) results, expected \(expected)") }
    }

    /// The page `open-page` must return: the first 20 names in `String` order (ties in any order).
    static func firstPage(_ names: [String], of data: Dataset) throws {
        let expected = Array(data.rows.lazy.map(\.name).sorted().prefix(Dataset.pageSize))
        if names != expected { throw WrongResult("open-page: got \(names), expected \(expected)") }
    }

    /// What `fetch-all` must return: every user once. Every repetition checks the count; the first
    /// also checks the unique emails and the sum of the ages.
    static func everyUser<U>(
        _ users: [U], email: (U) -> String, age: (U) -> Int, repetition: Int, of data: Dataset
    ) throws {
        try count(users.count, data.count, "fetch-all")
        guard repetition == 0 else { return }
        if Set(users.lazy.map(email)) != Set(data.rows.lazy.map(\.email)) {
            throw WrongResult("fetch-all: the emails are not those of the data set")
        }
        let (sum, expected) = (users.reduce(0) { $0 + age($1) }, data.rows.reduce(0) { $0 + $1.age })
        if sum != expected { throw WrongResult("fetch-all: ages sum to \(sum), expected \(expected)") }
    }

    /// What `fetch-unique` must return: the one user a repetition looks up.
    static func uniqueUser(_ emails: [String], repetition: Int, of data: Dataset) throws {
        try count(emails.count, 1, "fetch-unique")
        if emails[0] != data.rows[data.lookupTarget(repetition)].email { throw WrongResult("fetch-unique: wrong user") }
    }

    static func sortedByAge(_ ages: [Int]) throws {
        if zip(ages, ages.dropFirst()).contains(where: { $0 > $1 }) {
            throw WrongResult("fetch-indexed: results are not sorted by age")
        }
    }
}
