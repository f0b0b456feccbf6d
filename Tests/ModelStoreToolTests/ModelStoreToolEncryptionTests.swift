import Foundation
import ModelStore
import ModelStoreAdapters
import ModelStoreAppendLog
import ModelStoreCrypto
import ModelStoreJSONFile
import ModelStoreTestSupport
import Testing

/// `modelstore encrypt`, `decrypt` and `rekey`, and encrypted stores read and written by several
/// processes (the tests' and the tool's).
struct ModelStoreToolEncryptionTests {
    private let tool: ModelStoreTool
    private static let firstKey = String(repeating: "1f", count: 32)
    private static let secondKey = String(repeating: "e0", count: 32)
    private let environment = [
        "MS_TEST_KEY_ONE": ModelStoreToolEncryptionTests.firstKey,
        "MS_TEST_KEY_TWO": ModelStoreToolEncryptionTests.secondKey,
    ]

    init() throws {
        tool = try ModelStoreTool()
    }

    @discardableResult
    private func run(_ arguments: String..., status: Int32 = 0, sourceLocation: SourceLocation = #_sourceLocation)
        throws -> SampleProcess.Output
    {
        let output = try tool.process.run(arguments, in: tool.directory.url, environment: environment)
        #expect(output.status == status, "\(arguments): \(output)", sourceLocation: sourceLocation)
        return output
    }

    private static func key(_ hex: String) throws -> EncryptionKeySource {
        .key(try EncryptionKey(text: hex, origin: "the test"))
    }

    private func json(_ key: EncryptionKeySource?) -> JSONFileStoreConfiguration {
        var configuration = JSONFileStoreConfiguration(url: tool.url("library.json"))
        configuration.encryption = key
        return configuration
    }

    private func log(_ key: EncryptionKeySource?) -> AppendLogStoreConfiguration {
        var configuration = AppendLogStoreConfiguration(directory: tool.url("library-log"), compaction: .manual)
        configuration.encryption = key
        return configuration
    }

    @Test func aJSONStoreIsEncryptedRekeyedAndDecryptedInPlace() throws {
        try ToolLibrary.seed(json(nil))
        let before = try ToolLibrary.describe(json(nil))
        let encrypted = try run("encrypt", "json:library.json", "--key-env", "MS_TEST_KEY_ONE")
        #expect(encrypted.standardOutput.contains("encrypted (AES-256-GCM)"))
        #expect(!String(decoding: try Data(contentsOf: tool.url("library.json")), as: UTF8.self).contains("Austen"))
        #expect(
            !String(decoding: try Data(contentsOf: tool.url("library.json.backup")), as: UTF8.self).contains("Austen"))
        #expect(try ToolLibrary.describe(json(try Self.key(Self.firstKey))) == before)
        let healthy = try run("verify", "json:library.json?key-env=MS_TEST_KEY_ONE").standardOutput
        #expect(healthy == "json:library.json?key-env=MS_TEST_KEY_ONE: healthy (10 models)\n")
        let missing = try run("verify", "json:library.json", status: 7).standardError
        #expect(missing.contains("is encrypted, and no key was given"), "\(missing)")

        try run("rekey", "json:library.json?key-env=MS_TEST_KEY_ONE", "--key-env", "MS_TEST_KEY_TWO")
        let wrong = try #require(throws: DataStoreError.self) {
            try ToolLibrary.describe(json(try Self.key(Self.firstKey)))
        }
        #expect(wrong.code == .wrongKey)
        #expect(try ToolLibrary.describe(json(try Self.key(Self.secondKey))) == before)

        try run("decrypt", "json:library.json?key-env=MS_TEST_KEY_TWO")
        #expect(try ToolLibrary.describe(json(nil)) == before)
        #expect(String(decoding: try Data(contentsOf: tool.url("library.json")), as: UTF8.self).contains("Austen"))
    }

    @Test func anEncryptedLogIsWrittenByTheAppAndCompactedAndVerifiedByTheTool() throws {
        try ToolLibrary.seed(log(nil))
        let before = try ToolLibrary.describe(log(nil))
        try run("encrypt", "log:library-log", "--key-env", "MS_TEST_KEY_ONE")
        let key = try Self.key(Self.firstKey)
        #expect(try ToolLibrary.describe(log(key)) == before)
        // The app saves to it, the tool (another process) compacts it, the app reads it back.
        try ToolLibrary.churn(log(key), saves: 6)
        let churned = try ToolLibrary.describe(log(key))
        try run("compact", "log:library-log?key-env=MS_TEST_KEY_ONE")
        #expect(try ToolLibrary.describe(log(key)) == churned)
        try ToolLibrary.withContext(log(key)) { context in
            context.insert(ToolTag("after compaction"))
            try context.save()
        }
        let verify = try run("verify", "log:library-log?key-env=MS_TEST_KEY_ONE").standardOutput
        #expect(verify.contains("healthy (11 models)"), "\(verify)")
        for url in try FileManager.default.subpathsOfDirectory(atPath: tool.url("library-log").path) {
            let text = String(
                decoding: (try? Data(contentsOf: tool.url("library-log/" + url))) ?? Data(), as: UTF8.self)
            #expect(!text.contains("Austen") && !text.contains("after compaction"), "\(url) shows a value")
        }
        try run("rekey", "log:library-log?key-env=MS_TEST_KEY_ONE", "--passphrase-env", "MS_TEST_KEY_TWO")
        let afterRekey = try ToolLibrary.describe(log(.passphrase(Self.secondKey)))
        #expect(afterRekey.count == churned.count + 1)
        try run("decrypt", "log:library-log?passphrase-env=MS_TEST_KEY_TWO")
        #expect(try ToolLibrary.describe(log(nil)) == afterRekey)
        #expect(try AppendLogStore.transactions(at: tool.url("library-log")).count >= 9)
    }

    @Test func refusalsLeaveTheStoreAsItWas() throws {
        try ToolLibrary.seed(log(nil))
        let files = try FileTree.snapshot(tool.url("library-log"))
        try run("encrypt", "log:library-log", status: 2)
        try run("decrypt", "log:library-log", status: 2)
        try run("rekey", "log:library-log?key-env=MS_TEST_KEY_ONE", "--key-env", "MS_TEST_KEY_TWO", status: 3)
        try run("encrypt", "log:library-log?key-env=MS_TEST_KEY_ONE", "--key-env", "MS_TEST_KEY_TWO", status: 2)
        #expect(try FileTree.snapshot(tool.url("library-log")) == files)
        try run("encrypt", "log:library-log", "--key-env", "MS_TEST_KEY_ONE")
        let encrypted = try FileTree.snapshot(tool.url("library-log"))
        let wrong = try run(
            "rekey", "log:library-log?key-env=MS_TEST_KEY_TWO", "--key-env", "MS_TEST_KEY_ONE", status: 7)
        #expect(wrong.standardError.contains("does not open the encrypted store"), "\(wrong)")
        #expect(try FileTree.snapshot(tool.url("library-log")) == encrypted)
        let siblings = try FileManager.default.contentsOfDirectory(atPath: tool.directory.url.path)
        #expect(!siblings.contains { $0.contains(".rekey-") }, "a staging directory was left: \(siblings)")
    }

    @Test func aRekeyKilledAtAnyInstantLeavesTheOldStoreOrTheNewOne() throws {
        try ToolLibrary.seed(log(nil))
        try ToolLibrary.churn(log(nil), saves: 40)
        try run("encrypt", "log:library-log", "--key-env", "MS_TEST_KEY_ONE")
        let expected = try ToolLibrary.describe(log(try Self.key(Self.firstKey)))
        var keys = [Self.firstKey, Self.secondKey]
        var generator = SplitMix64(seed: 4646)
        for _ in 0..<12 {
            let process = Process()
            process.executableURL = tool.process.executable
            process.currentDirectoryURL = tool.directory.url
            process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
            let (current, next) =
                keys[0] == Self.firstKey
                ? ("MS_TEST_KEY_ONE", "MS_TEST_KEY_TWO") : ("MS_TEST_KEY_TWO", "MS_TEST_KEY_ONE")
            process.arguments = ["rekey", "log:library-log?key-env=\(current)", "--key-env", next]
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            usleep(UInt32(generator.below(60_000)))
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            LogLock.waitUntilFree(tool.url("library-log"))
            let underOld = try? ToolLibrary.describe(log(try Self.key(keys[0])))
            let underNew = try? ToolLibrary.describe(log(try Self.key(keys[1])))
            #expect((underOld == nil) != (underNew == nil), "the log opens under neither key or both")
            #expect((underOld ?? underNew) == expected)
            if underNew != nil { keys.reverse() }
        }
    }
}
