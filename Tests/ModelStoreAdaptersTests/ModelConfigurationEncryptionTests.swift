import Foundation
import ModelStore
import ModelStoreAdapters
import ModelStoreCrypto
import ModelStoreTestSupport
import Testing

/// `ModelConfiguration(url:encryption:)`: a SwiftData-style configuration that opens an encrypted
/// store, and refuses the wrong key, no key, and a store that has no files to encrypt.
struct ModelConfigurationEncryptionTests {
    private static let key = try! EncryptionKey(bytes: (0..<32).map { UInt8(($0 &* 11) & 0xFF) })
    private static let otherKey = try! EncryptionKey(bytes: (0..<32).map { UInt8(($0 &* 5 &+ 3) & 0xFF) })

    /// Every byte of every file under `url` (a file, or a folder of them).
    private static func bytes(under url: URL) throws -> [String: Data] {
        var result: [String: Data] = [:]
        let paths =
            FileManager.default.enumerator(atPath: url.path).map { ($0.allObjects as? [String]) ?? [] }
            ?? []
        if paths.isEmpty { return [url.path: try Data(contentsOf: url)] }
        for path in paths {
            let file = url.appending(path: path)
            var isFolder: ObjCBool = false
            if FileManager.default.fileExists(atPath: file.path, isDirectory: &isFolder), !isFolder.boolValue {
                result[path] = try Data(contentsOf: file)
            }
        }
        return result
    }

    /// The files of the store at `url` and the files beside it (SQLite's `-wal`, the JSON backup).
    private static func storeFiles(_ url: URL) throws -> [String: Data] {
        try bytes(under: url.deletingLastPathComponent())
    }

    @Test(arguments: ["trips.json", "trips.log", "trips.store"])
    func aConfigurationWithAKeyEncryptsTheStoreAndReopensOnlyWithIt(file: String) throws {
        let directory = try TemporaryDirectory()
        let url = directory.url.appending(path: file)
        do {
            let container = try ModelContainer(
                for: Trip.self, configurations: ModelConfiguration(url: url, encryption: .key(Self.key)))
            let context = ModelContext(container)
            context.insert(Trip(name: "Lisbon in spring", start: .now))
            try context.save()
        }
        let files = try Self.storeFiles(url)
        #expect(!files.isEmpty)
        for (path, data) in files {
            #expect(data.range(of: Data("Lisbon in spring".utf8)) == nil, "'\(path)' holds the name in plaintext")
        }

        do {
            // Closed before the refused opens below: the append log admits one writing process.
            let reopened = try ModelContainer(
                for: Trip.self, configurations: ModelConfiguration(url: url, encryption: .key(Self.key)))
            #expect(try ModelContext(reopened).fetch(FetchDescriptor<Trip>()).map(\.name) == ["Lisbon in spring"])
        }

        let before = try Self.storeFiles(url)
        let wrong = expectError(.wrongKey) {
            try ModelContainer(
                for: Trip.self, configurations: ModelConfiguration(url: url, encryption: .key(Self.otherKey)))
        }
        #expect(wrong?.message.contains(url.lastPathComponent) == true, "\(String(describing: wrong))")
        expectError(.keyRequired) { try ModelContainer(for: Trip.self, configurations: ModelConfiguration(url: url)) }
        #expect(try Self.storeFiles(url) == before, "a refused open leaves every file as it was")
    }

    @Test func aPassphraseOpensTheStoreItCreated() throws {
        let directory = try TemporaryDirectory()
        let url = directory.url.appending(path: "trips.store")
        let configuration = ModelConfiguration(url: url, encryption: .passphrase("correct horse battery staple"))
        do {
            let context = ModelContext(try ModelContainer(for: Trip.self, configurations: configuration))
            context.insert(Trip(name: "Porto", start: .now))
            try context.save()
        }
        let reopened = try ModelContainer(for: Trip.self, configurations: configuration)
        #expect(try ModelContext(reopened).fetch(FetchDescriptor<Trip>()).map(\.name) == ["Porto"])
        expectError(.wrongKey) {
            try ModelContainer(
                for: Trip.self,
                configurations: ModelConfiguration(url: url, encryption: .passphrase("wrong horse battery staple")))
        }
    }

    @Test func anInMemoryStoreRefusesAKeyAndSaysWhy() throws {
        let error = expectError(.invalidConfiguration) {
            try ModelContainer(
                for: Trip.self,
                configurations: ModelConfiguration(isStoredInMemoryOnly: true, encryption: .key(Self.key)))
        }
        #expect(error?.message.contains("in-memory") == true, "\(String(describing: error))")
        #expect(error?.remedy?.contains("encryption:") == true)
    }

    @Test func configurationsWithDifferentKeysAreDifferentConfigurations() {
        let url = URL(filePath: "/tmp/trips.store")
        let plain = ModelConfiguration(url: url)
        let encrypted = ModelConfiguration(url: url, encryption: .key(Self.key))
        #expect(plain != encrypted)
        #expect(encrypted == ModelConfiguration(url: url, encryption: .key(Self.key)))
        #expect(encrypted != ModelConfiguration(url: url, encryption: .key(Self.otherKey)))
        let printed = "\(encrypted) \(String(reflecting: encrypted))"
        let bytes = Self.key.withUnsafeBytes { Array($0) }
        #expect(!printed.contains(bytes.map { String(format: "%02x", $0) }.joined()), "\(printed)")
        #expect(!printed.contains(bytes.prefix(4).map(String.init).joined(separator: ", ")), "\(printed)")
    }
}
