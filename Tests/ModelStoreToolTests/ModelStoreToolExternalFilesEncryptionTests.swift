import Foundation
import ModelStore
import ModelStoreAdapters
import ModelStoreCrypto
import ModelStoreJSONFile
import ModelStoreSQLite
import ModelStoreTestSupport
import Testing

/// A scan whose image is large enough to be kept in an `.externalStorage` file.
final class ToolScan: PersistentModel {
    @Attribute(.unique) var label: String = ""
    @Attribute(.externalStorage) var image: Data?
    let persistentBackingData = BackingData()
    init() {}
}

/// `modelstore encrypt`, `decrypt` and `rekey` of stores with `.externalStorage` files, killed at
/// random instants: afterwards the store opens under the old key or the new one (never both, never
/// neither), with every model and every file.
struct ModelStoreToolExternalFilesEncryptionTests {
    private let tool: ModelStoreTool
    private static let keys = [String(repeating: "2d", count: 32), String(repeating: "c4", count: 32)]
    private let environment = [
        "MS_TEST_KEY_ONE": ModelStoreToolExternalFilesEncryptionTests.keys[0],
        "MS_TEST_KEY_TWO": ModelStoreToolExternalFilesEncryptionTests.keys[1],
    ]

    init() throws {
        tool = try ModelStoreTool()
    }

    private static func key(_ index: Int?) throws -> EncryptionKeySource? {
        try index.map { .key(try EncryptionKey(text: keys[$0], origin: "the test")) }
    }

    private func json(_ key: Int?) throws -> JSONFileStoreConfiguration {
        var configuration = JSONFileStoreConfiguration(url: tool.url("scans.json"))
        configuration.encryption = try Self.key(key)
        return configuration
    }

    private func sqlite(_ key: Int?) throws -> SQLiteStoreConfiguration {
        var configuration = SQLiteStoreConfiguration(url: tool.url("scans.sqlite"))
        configuration.encryption = try Self.key(key)
        return configuration
    }

    /// Twelve scans with distinct images of 17 to 39 KiB, saved in three saves.
    private func seed(_ configuration: any DataStoreConfiguration) throws {
        let container = try ModelContainer(for: Schema(ToolScan.self), configurations: [configuration])
        let context = ModelContext(container)
        for index in 0..<12 {
            let scan = ToolScan()
            scan.label = "scan \(index)"
            scan.image = Data((0..<(17_000 + index * 2_000)).map { UInt8(truncatingIfNeeded: $0 &* (index + 3)) })
            context.insert(scan)
            if index % 4 == 3 { try context.save() }
        }
    }

    /// Each scan's label and image, or `nil` when the store does not open (or read) with `configuration`.
    private func describe(_ configuration: any DataStoreConfiguration) -> [String]? {
        try? {
            let container = try ModelContainer(for: Schema(ToolScan.self), configurations: [configuration])
            return try ModelContext(container).fetch(FetchDescriptor<ToolScan>()).map {
                "\($0.label) \($0.image?.count ?? -1) \($0.image?.reduce(0) { $0 &* 31 &+ Int($1) } ?? 0)"
            }.sorted()
        }()
    }

    /// Runs the tool with `arguments`, killing it after `delay` (if it has not finished); returns
    /// how long it ran.
    @discardableResult
    private func run(_ arguments: [String], killAfter delay: Duration? = nil) throws -> Duration {
        let process = Process()
        process.executableURL = tool.process.executable
        process.currentDirectoryURL = tool.directory.url
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        process.arguments = arguments
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        let clock = ContinuousClock()
        let start = clock.now
        try process.run()
        if let delay {
            usleep(UInt32(delay / .microseconds(1)))
            kill(process.processIdentifier, SIGKILL)
        }
        process.waitUntilExit()
        if delay == nil { #expect(process.terminationStatus == 0, "\(arguments) failed") }
        return clock.now - start
    }

    /// Converts the store back and forth between two states with `command(from, to)`, killed at
    /// random instants over the time one whole conversion takes, and checks after each kill that it
    /// opens in exactly one of the two states, with every scan.
    private func killRepeatedly(
        store: String, states: (Int?, Int?), configuration: (Int?) throws -> any DataStoreConfiguration,
        command: (_ from: Int?, _ to: Int?) -> [String]
    ) throws {
        let expected = try #require(describe(try configuration(states.0)))
        var (current, next) = states
        let whole = try run(command(current, next))
        #expect(describe(try configuration(next)) == expected)
        (current, next) = (next, current)
        var generator = SplitMix64(seed: 4601)
        for _ in 0..<14 {
            let delay = Duration.microseconds(generator.below(Int(whole / .microseconds(1)) * 5 / 4 + 1))
            try run(command(current, next), killAfter: delay)
            let underCurrent = describe(try configuration(current))
            let underNext = describe(try configuration(next))
            #expect((underCurrent == nil) != (underNext == nil), "the store opens in neither state or both")
            #expect((underCurrent ?? underNext) == expected)
            if underNext != nil { (current, next) = (next, current) }
        }
        #expect(describe(try configuration(current)) == expected)
        // A whole run afterwards leaves only the store: no staging copy, no file of a killed run once
        // the store is compacted (a JSON rekey removes them itself).
        try run(command(current, next))
        #expect(describe(try configuration(next)) == expected)
        let siblings = try FileManager.default.contentsOfDirectory(atPath: tool.directory.url.path)
        #expect(!siblings.contains { $0.contains(".rekeying-") }, "\(siblings)")
        if store.hasSuffix(".sqlite") {
            let url = "sqlite:\(store)" + (next.map { "?key-env=\(Self.keyOption($0))" } ?? "")
            try run(["compact", url])
        }
        let files = try FileManager.default.contentsOfDirectory(atPath: tool.url(store + ".external").path)
        #expect(files.count == 12, "\(files)")
    }

    private static func keyOption(_ key: Int?) -> String {
        key.map { $0 == 0 ? "MS_TEST_KEY_ONE" : "MS_TEST_KEY_TWO" } ?? ""
    }

    @Test func anSQLiteStoreIsEncryptedAndDecryptedAtomicallyWhenKilled() throws {
        try seed(try sqlite(nil))
        try killRepeatedly(store: "scans.sqlite", states: (nil, 0), configuration: sqlite) { from, _ in
            from == nil
                ? ["encrypt", "sqlite:scans.sqlite", "--key-env", Self.keyOption(0)]
                : ["decrypt", "sqlite:scans.sqlite?key-env=\(Self.keyOption(0))"]
        }
    }

    @Test func anSQLiteStoreIsRekeyedAtomicallyWhenKilled() throws {
        try seed(try sqlite(0))
        try killRepeatedly(store: "scans.sqlite", states: (0, 1), configuration: sqlite) { from, to in
            ["rekey", "sqlite:scans.sqlite?key-env=\(Self.keyOption(from))", "--key-env", Self.keyOption(to)]
        }
    }

    @Test func aJSONStoreIsRekeyedAtomicallyWhenKilled() throws {
        try seed(try json(0))
        try killRepeatedly(store: "scans.json", states: (0, 1), configuration: json) { from, to in
            ["rekey", "json:scans.json?key-env=\(Self.keyOption(from))", "--key-env", Self.keyOption(to)]
        }
    }

    @Test func aJSONStoreIsEncryptedAndDecryptedAtomicallyWhenKilled() throws {
        try seed(try json(nil))
        try killRepeatedly(store: "scans.json", states: (nil, 0), configuration: json) { from, _ in
            from == nil
                ? ["encrypt", "json:scans.json", "--key-env", Self.keyOption(0)]
                : ["decrypt", "json:scans.json?key-env=\(Self.keyOption(0))"]
        }
    }
}
