import Foundation
import ModelStore
import ModelStoreAppendLog
import ModelStoreJSONFile
import ModelStoreTestSupport
import Testing

/// Every file of every durable store, damaged in many ways: opening gives a typed error that names
/// the file and the offset, or opens with exactly what a crash could leave (reported); it never
/// crashes, hangs or opens wrong data, and a failed open leaves every file byte for byte as it was.
///
/// After a refused open, the store is mended as its user would: an append log with `repair` (which
/// either changes nothing and says why, or keeps what it can, says what it set aside in `damaged/`,
/// and leaves a log that opens with exactly a saved state), a JSON file by restoring its backup (which
/// then opens with exactly a saved state).
///
/// `scripts/corruption-test.sh ROUNDS` runs it long: `MODELSTORE_CORRUPTION_ROUNDS` damages of each
/// kind per file (2 by default), from the seed `MODELSTORE_CORRUPTION_SEED`.
struct CorruptionTests {
    /// A damage done to a file.
    enum Damage: CaseIterable {
        case truncate, empty, flipBit, garbageRange, zeroRange, appendGarbage, deepNesting

        func apply(to bytes: [UInt8], _ random: inout SplitMix64) -> [UInt8] {
            var bytes = bytes
            let count = bytes.count
            switch self {
            case .truncate: return Array(bytes.prefix(count == 0 ? 0 : random.below(count)))
            case .empty: return []
            case .flipBit:
                guard count > 0 else { return [1] }
                bytes[random.below(count)] ^= UInt8(1) << UInt8(random.below(8))
            case .garbageRange, .zeroRange:
                guard count > 0 else { return [7] }
                let start = random.below(count)
                for index in start..<min(count, start + 1 + random.below(64)) {
                    bytes[index] = self == .zeroRange ? 0 : UInt8(truncatingIfNeeded: random.next())
                }
            case .appendGarbage:
                bytes += (0..<(1 + random.below(100))).map { _ in UInt8(truncatingIfNeeded: random.next()) }
            case .deepNesting:
                // Balanced arrays nested far past any parser's limit, at a random point.
                let depth = 10_000 + random.below(90_000)
                let nested =
                    [UInt8](repeating: UInt8(ascii: "["), count: depth)
                    + [UInt8](repeating: UInt8(ascii: "]"), count: depth)
                bytes.insert(contentsOf: nested, at: random.below(count + 1))
            }
            return bytes
        }
    }

    private static var rounds: Int {
        Int(ProcessInfo.processInfo.environment["MODELSTORE_CORRUPTION_ROUNDS"] ?? "") ?? 2
    }
    private static var seed: UInt64 {
        UInt64(ProcessInfo.processInfo.environment["MODELSTORE_CORRUPTION_SEED"] ?? "") ?? 1
    }

    @Test(.timeLimit(.minutes(10))) func damagedJSONStores() throws {
        let directory = try TemporaryDirectory()
        let configuration = JSONFileStoreConfiguration(url: directory.url.appendingPathComponent("original/store.json"))
        try check(configuration, original: directory.url.appendingPathComponent("original"), work: directory.url)
    }

    @Test(.timeLimit(.minutes(10))) func damagedAppendLogs() throws {
        let directory = try TemporaryDirectory()
        let configuration = AppendLogStoreConfiguration(
            directory: directory.url.appendingPathComponent("original/store-log"), compaction: .manual)
        try check(configuration, original: directory.url.appendingPathComponent("original"), work: directory.url)
    }

    /// Builds the store, then damages each of its files in every way, `rounds` times each.
    private func check(_ configuration: any DataStoreConfiguration, original: URL, work: URL) throws {
        let states = try build(configuration)
        let files = try Self.files(in: original)
        #expect(files.count >= 3, "\(files)")
        var random = SplitMix64(seed: Self.seed)
        var outcomes: [String: Int] = [:]
        for file in files {
            for damage in Damage.allCases {
                for round in 0..<Self.rounds {
                    let copy = work.appendingPathComponent("work")
                    try? FileManager.default.removeItem(at: copy)
                    try FileManager.default.copyItem(at: original, to: copy)
                    let target = copy.appendingPathComponent(file)
                    let damaged = damage.apply(to: [UInt8](try Data(contentsOf: target)), &random)
                    try Data(damaged).write(to: target)
                    let place = "\(damage) of '\(file)' (round \(round))"
                    let outcome = try open(
                        relocated(configuration, from: original, to: copy), states: states, copy: copy, place: place)
                    outcomes[outcome, default: 0] += 1
                }
            }
        }
        #expect(outcomes.keys.contains { $0.hasPrefix("refused") }, "\(outcomes)")
        print("corruption: \(type(of: configuration)): \(files.count) files, \(Self.rounds) rounds, \(outcomes)")
    }

    /// Opens a damaged copy and checks what happened; returns `"opened"`, or `"refused, "` and how the
    /// store was mended.
    private func open(
        _ configuration: any DataStoreConfiguration, states: [[String]], copy: URL, place: String
    ) throws -> String {
        let before = try FileTree.snapshot(copy)
        let container: ModelContainer
        do {
            container = try ModelContainer(for: Schema(ToolLibrary.types), configurations: [configuration])
        } catch let error as DataStoreError {
            let location: (file: String, offset: Int)? =
                (error.underlyingError as? AppendLogDamage).map { ($0.file, $0.offset) }
                ?? (error.underlyingError as? JSONFileDamage).map { ($0.file, $0.offset) }
            #expect(location != nil, "\(place): the error names no file and offset: \(error)")
            if let location {
                #expect(
                    error.message.contains((location.file as NSString).lastPathComponent),
                    "\(place): the message does not name the file: \(error)")
            }
            #expect(
                [.corrupted, .unsupportedFeature].contains(error.code) || error.code == .notFound, "\(place): \(error)")
            var after = try FileTree.snapshot(copy)
            if before["store.json.lock"] == nil { after["store.json.lock"] = nil }
            if before["store-log/lock"] == nil { after["store-log/lock"] = nil }
            #expect(after == before, "\(place): a failed open changed the files")
            return try mend(configuration, states: states, copy: copy, place: place)
        }
        defer { ToolLibrary.close(container) }
        let found = try ToolLibrary.describe(ModelContext(container))
        if found != states.last {
            let torn = (container.stores.first as? AppendLogStore)?.tornTail
            #expect(
                torn != nil && states.contains(found),
                "\(place): opened with other data than was saved, without saying so")
        }
        return "opened"
    }

    /// Mends a store whose open was refused, as its user would, and checks what the mended store opens
    /// with; returns `"refused, "` and what mending did.
    private func mend(
        _ configuration: any DataStoreConfiguration, states: [[String]], copy: URL, place: String
    ) throws -> String {
        if let json = configuration as? JSONFileStoreConfiguration {
            let backup = json.url.appendingPathExtension("backup")
            guard FileManager.default.fileExists(atPath: backup.path) else { return "refused, no backup" }
            try? FileManager.default.removeItem(at: json.url)
            try FileManager.default.moveItem(at: backup, to: json.url)
            try expectSavedState(configuration, states: states, place: "\(place), backup restored")
            return "refused, backup restored"
        }
        let log = try #require(configuration as? AppendLogStoreConfiguration)
        let before = try FileTree.snapshot(copy)
        let report: AppendLogRepairReport
        do {
            report = try AppendLogStore.repair(at: log.directory)
        } catch let error as DataStoreError {
            #expect([.corrupted, .notFound].contains(error.code), "\(place): repair failed with \(error)")
            #expect(try FileTree.snapshot(copy) == before, "\(place): a failed repair changed the files")
            return "refused, not repairable"
        }
        #expect(report.changedAnything, "\(place): repair found nothing where open refused: \(report)")
        for item in report.setAside {
            let saved = log.directory.appendingPathComponent(item.savedAs).path
            let size = (try? FileManager.default.attributesOfItem(atPath: saved))?[.size] as? Int
            #expect(
                size == item.byteCount,
                "\(place): repair says it set aside \(item), but '\(item.savedAs)' holds \(size ?? 0) bytes")
        }
        try expectSavedState(configuration, states: states, place: "\(place), repaired (\(report))")
        return "refused, repaired"
    }

    /// Opens the store, which must hold exactly one of the saved states.
    private func expectSavedState(
        _ configuration: any DataStoreConfiguration, states: [[String]], place: String
    ) throws {
        do {
            let found = try ToolLibrary.withContext(configuration) { try ToolLibrary.describe($0) }
            #expect(states.contains(found), "\(place): opened with data that was never saved: \(found)")
        } catch {
            Issue.record("\(place): the mended store does not open: \(error)")
        }
    }

    /// Seeds the library, compacts an append log, and saves a few more transactions; returns the
    /// contents after each save from the seed on.
    private func build(_ configuration: any DataStoreConfiguration) throws -> [[String]] {
        try ToolLibrary.seed(configuration)
        var states = [try ToolLibrary.describe(configuration)]
        for step in 0..<4 {
            try ToolLibrary.withContext(configuration) { context in
                if step == 2, let log = context.container.stores.first as? AppendLogStore { _ = try log.compact() }
                let book = try #require(try context.fetch(FetchDescriptor<ToolBook>()).first { $0.title == "Emma" })
                book.pages = 500 + step
                try context.save()
                states.append(try ToolLibrary.describe(context))
            }
        }
        return states
    }

    private func relocated(
        _ configuration: any DataStoreConfiguration, from: URL, to: URL
    ) -> any DataStoreConfiguration {
        if let json = configuration as? JSONFileStoreConfiguration {
            return JSONFileStoreConfiguration(url: to.appendingPathComponent(json.url.lastPathComponent))
        }
        let log = configuration as! AppendLogStoreConfiguration
        return AppendLogStoreConfiguration(
            directory: to.appendingPathComponent(log.directory.lastPathComponent), compaction: .manual)
    }

    /// Every regular file under `directory`, by relative path.
    static func files(in directory: URL) throws -> [String] {
        try FileTree.snapshot(directory).keys.sorted()
    }
}
