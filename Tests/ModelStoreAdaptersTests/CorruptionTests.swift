import Foundation
import ModelStore
import ModelStoreAppendLog
import ModelStoreJSONFile
import ModelStoreSQLite
import ModelStoreTestSupport
import Testing

/// Every file of every durable store, damaged in many ways: opening gives a typed error that names
/// the file and the offset, or opens with exactly what a crash could leave (reported); it never
/// crashes, hangs or opens wrong data, and a failed open leaves every file byte for byte as it was.
///
/// An SQLite store is checked closed (the database alone) and as a process left it (the database and
/// its write-ahead log, without SQLite's shared-memory index). Its open reads only the store's meta
/// table, so damage elsewhere may be found when the rows are read: reading every model must then
/// throw the same kind of typed error, naming the file; SQLite has no repair.
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
        case truncate, empty, flipBit, flipUsedBit, garbageRange, zeroRange, appendGarbage, deepNesting

        func apply(to bytes: [UInt8], _ random: inout SplitMix64) -> [UInt8] {
            var bytes = bytes
            let count = bytes.count
            switch self {
            case .truncate: return Array(bytes.prefix(count == 0 ? 0 : random.below(count)))
            case .empty: return []
            case .flipBit:
                guard count > 0 else { return [1] }
                bytes[random.below(count)] ^= UInt8(1) << UInt8(random.below(8))
            case .flipUsedBit:
                // A bit of a byte that holds something: most of an SQLite page is zeros, where a flip
                // seldom lands on a value.
                let used = bytes.indices.filter { bytes[$0] != 0 }
                guard !used.isEmpty else { return [1] }
                bytes[used[random.below(used.count)]] ^= UInt8(1) << UInt8(random.below(8))
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

    @Test(.timeLimit(.minutes(10))) func damagedSQLiteStores() throws {
        let directory = try TemporaryDirectory()
        let configuration = SQLiteStoreConfiguration(url: directory.url.appendingPathComponent("original/store.sqlite"))
        try check(configuration, original: directory.url.appendingPathComponent("original"), work: directory.url)
    }

    @Test(.timeLimit(.minutes(10))) func damagedSQLiteStoresWithTheirLog() throws {
        let directory = try TemporaryDirectory()
        let configuration = SQLiteStoreConfiguration(url: directory.url.appendingPathComponent("live/store.sqlite"))
        let original = directory.url.appendingPathComponent("original")
        // The database and its write-ahead log copied while the store is open after the last save:
        // what a killed process leaves, less SQLite's shared-memory index.
        let states = try build(configuration) { _ in
            try FileManager.default.createDirectory(at: original, withIntermediateDirectories: true)
            for name in ["store.sqlite", "store.sqlite-wal"] {
                try FileManager.default.copyItem(
                    at: configuration.url!.deletingLastPathComponent().appendingPathComponent(name),
                    to: original.appendingPathComponent(name))
            }
        }
        #expect(try Self.files(in: original) == ["store.sqlite", "store.sqlite-wal"])
        try check(
            SQLiteStoreConfiguration(url: original.appendingPathComponent("store.sqlite")), states: states,
            original: original, work: directory.url)
    }

    /// Builds the store, then damages each of its files in every way, `rounds` times each.
    private func check(_ configuration: any DataStoreConfiguration, original: URL, work: URL) throws {
        try check(configuration, states: try build(configuration), original: original, work: work)
    }

    /// Damages each file of a built store in every way, `rounds` times each.
    private func check(
        _ configuration: any DataStoreConfiguration, states: [[String]], original: URL, work: URL
    ) throws {
        let files = try Self.files(in: original)
        #expect(files.count >= (configuration is SQLiteStoreConfiguration ? 1 : 3), "\(files)")
        let pristine = try FileTree.snapshot(original)
        var random = SplitMix64(seed: Self.seed)
        var outcomes: [String: Int] = [:]
        var byDamage: [String: Int] = [:]
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
                        relocated(configuration, from: original, to: copy), states: states, copy: copy,
                        pristine: pristine, place: place)
                    outcomes[outcome, default: 0] += 1
                    byDamage["\(damage) of \(file): \(outcome)", default: 0] += 1
                }
            }
        }
        #expect(outcomes.keys.contains { $0.hasPrefix("refused") }, "\(outcomes)")
        print("corruption: \(type(of: configuration)): \(files.count) files, \(Self.rounds) rounds, \(outcomes)")
        for (key, count) in byDamage.sorted(by: { $0.key < $1.key }) {
            print("corruption: \(type(of: configuration)): \(key): \(count)")
        }
    }

    /// Opens a damaged copy and checks what happened; returns `"opened"`, or `"refused, "` and how the
    /// store was mended.
    private func open(
        _ configuration: any DataStoreConfiguration, states: [[String]], copy: URL, pristine: [String: Data],
        place: String
    ) throws -> String {
        let before = try FileTree.snapshot(copy)
        if configuration is SQLiteStoreConfiguration {
            return try openSQLite(
                configuration, states: states, copy: copy, before: before, pristine: pristine, place: place)
        }
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

    /// Opens a damaged SQLite store and reads every model: either exactly the last saved state, or a
    /// typed error naming the file, at the open (which then changed no file but SQLite's shared-memory
    /// index) or at the read. `modelstore verify` must report every refused store as damaged.
    ///
    /// Two exceptions, documented in the store's `FORMAT.md`: a write-ahead log cut short or damaged only
    /// in its last frames (no frame of its generation after the damage) reads as the unfinished end a
    /// killed process leaves, so the store opens with the state before the log's last transaction (a
    /// saved state, never other data); and a damaged page
    /// that no longer leads to some rows hides them from reads (no row is read, so no checksum is
    /// checked), which `verify` must then report.
    private func openSQLite(
        _ configuration: any DataStoreConfiguration, states: [[String]], copy: URL, before: [String: Data],
        pristine: [String: Data], place: String
    ) throws -> String {
        let url = try #require((configuration as? SQLiteStoreConfiguration)?.url)
        let error: DataStoreError
        var opened = false
        do {
            let found = try ToolLibrary.withContext(configuration) { context in
                opened = true
                return try ToolLibrary.describe(context)
            }
            if found == states.last { return "opened" }
            let log = "store.sqlite-wal"
            if states.contains(found) && Self.damageIsAtTheLogsEnd(before[log], pristine[log]) {
                return "opened with the state before the log's damaged end"
            }
            // Rows a damaged page no longer leads to are not read, so no checksum is checked: reads miss
            // them, and verify (SQLite's integrity check) must report the damage.
            #expect(
                Self.verifyFindsDamage(url),
                "\(place): opened with other data than was saved, and verify finds nothing: \(found)")
            return "opened without rows of a damaged page, which verify reports"
        } catch let thrown as DataStoreError {
            error = thrown
        }
        #expect(
            [.corrupted, .unsupportedFeature].contains(error.code), "\(place): \(opened ? "read" : "open"): \(error)")
        #expect(error.message.contains(url.path), "\(place): the error does not name the file: \(error)")
        if !opened {
            var after = try FileTree.snapshot(copy)
            if before["store.sqlite-shm"] == nil { after["store.sqlite-shm"] = nil }
            #expect(after == before, "\(place): a failed open changed the files")
        }
        // What verify reports, without writing a file.
        let files = Set(try Self.files(in: copy))
        #expect(Self.verifyFindsDamage(url), "\(place): verify finds nothing where \(error)")
        #expect(Set(try Self.files(in: copy)) == files, "\(place): verify left files behind")
        return opened ? "refused when read" : "refused when opened"
    }

    /// Whether `SQLiteStore.integrityProblems` (what `modelstore verify` runs) lists a problem or
    /// refuses the file as damaged.
    static func verifyFindsDamage(_ url: URL) -> Bool {
        do {
            return try !SQLiteStore.integrityProblems(at: url).isEmpty
        } catch let error as DataStoreError {
            return [.corrupted, .unsupportedFeature].contains(error.code)
        } catch {
            return false
        }
    }

    /// Whether a damaged write-ahead log (`damaged`) is what a killed process could have left of the
    /// saved one (`saved`): its first change is in a frame (or it was cut there) after which no frame
    /// header of the log's generation (its salt values) is left, so nothing committed follows it.
    static func damageIsAtTheLogsEnd(_ damaged: Data?, _ saved: Data?) -> Bool {
        guard let damaged = damaged.map(Array.init), let saved = saved.map(Array.init), saved.count > 32 else {
            return false
        }
        let frameSize = 24 + saved[8...11].reduce(0) { $0 << 8 | Int($1) }
        let common = min(damaged.count, saved.count)
        let firstChange = (0..<common).first { damaged[$0] != saved[$0] } ?? common
        guard firstChange >= 32 else { return damaged.count <= 32 }
        let salts = Array(saved[16..<24])
        var next = 32 + ((firstChange - 32) / frameSize + 1) * frameSize
        while next + 16 <= damaged.count {
            if Array(damaged[next + 8..<next + 16]) == salts { return false }
            next += frameSize
        }
        return true
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
    /// `whileOpen` runs after the last save, before the store closes.
    private func build(
        _ configuration: any DataStoreConfiguration, whileOpen: (ModelContext) throws -> Void = { _ in }
    ) throws -> [[String]] {
        try ToolLibrary.seed(configuration)
        var states = [try ToolLibrary.describe(configuration)]
        for step in 0..<4 {
            try ToolLibrary.withContext(configuration) { context in
                if step == 2, let log = context.container.stores.first as? AppendLogStore { _ = try log.compact() }
                let book = try #require(try context.fetch(FetchDescriptor<ToolBook>()).first { $0.title == "Emma" })
                book.pages = 500 + step
                if step == 3 { book.tags = try context.fetch(FetchDescriptor<ToolTag>()) }
                try context.save()
                states.append(try ToolLibrary.describe(context))
                if step == 3 { try whileOpen(context) }
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
        if let sqlite = configuration as? SQLiteStoreConfiguration {
            return SQLiteStoreConfiguration(url: to.appendingPathComponent(sqlite.url!.lastPathComponent))
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
