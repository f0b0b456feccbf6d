import Foundation
import ModelStore
import ModelStoreAdapters
import ModelStoreAppendLog
import ModelStoreTestSupport
import Testing

/// A photo large enough to go to a file of its own in the stores that keep `.externalStorage` values apart.
final class PermissionPhoto: PersistentModel {
    @Attribute var caption: String = ""
    @Attribute(.externalStorage) var bytes: Data = Data()

    let persistentBackingData = BackingData()
    init() {}
}

/// The bits of the files and folders the built-in stores create: owner only unless the store URL's
/// `mode` says otherwise, and `modelstore verify`'s warning about looser ones.
struct FilePermissionTests {
    private let tool: ModelStoreTool

    init() throws {
        tool = try ModelStoreTool()
    }

    /// Opens the store at `url` (in the test's directory), saves a photo twice (so a backup, external
    /// files and history exist), and closes it.
    private func fill(_ url: String) throws {
        let scheme = url.prefix { $0 != ":" }
        let configuration = try StoreRegistry.shared.configuration(
            for: scheme + ":" + tool.directory.url.path + "/" + url.dropFirst(scheme.count + 1))
        let container = try ModelContainer(for: Schema([PermissionPhoto.self]), configurations: [configuration])
        defer { ToolLibrary.close(container) }
        do {
            let context = ModelContext(container)
            let photo = PermissionPhoto()
            photo.caption = "first"
            photo.bytes = Data(repeating: 9, count: 64 * 1024)
            context.insert(photo)
            try context.save()
            photo.caption = "second"
            photo.bytes = Data(repeating: 8, count: 64 * 1024)
            try context.save()
        }
    }

    /// Every file and folder of the store at `name` in the test's directory, with its bits.
    private func modes(_ name: String) throws -> [String: UInt16] {
        let folder = tool.directory.url.path
        var modes: [String: UInt16] = [:]
        let enumerator = try #require(FileManager.default.enumerator(atPath: folder))
        while let relative = enumerator.nextObject() as? String {
            guard relative.hasPrefix(name) else { continue }
            let attributes = try FileManager.default.attributesOfItem(atPath: folder + "/" + relative)
            modes[relative] = (attributes[.posixPermissions] as? NSNumber)?.uint16Value
        }
        return modes
    }

    private static let stores: [(url: String, name: String, expected: [String])] = [
        ("json:photos.json", "photos.json", ["photos.json", "photos.json.backup", "photos.json.lock"]),
        ("log:photos-log", "photos-log", ["photos-log", "photos-log/manifest", "photos-log/lock"]),
        ("sqlite:photos.sqlite", "photos.sqlite", ["photos.sqlite", "photos.sqlite.external"]),
    ]

    @Test(arguments: [0, 1, 2]) func everyFileAndFolderIsPrivateByDefault(_ index: Int) throws {
        let store = Self.stores[index]
        try fill(store.url)
        if !store.url.hasPrefix("json:") {
            // What the tool writes (a checkpoint and history/, a vacuumed database) is private too.
            try tool.run("compact", store.url)
        }
        let modes = try modes(store.name)
        for path in store.expected { #expect(modes[path] != nil, "\(path) was not created") }
        #expect(modes.count >= store.expected.count)
        for (path, mode) in modes {
            var isFolder: ObjCBool = false
            _ = FileManager.default.fileExists(atPath: tool.url(path).path, isDirectory: &isFolder)
            #expect(mode == (isFolder.boolValue ? 0o700 : 0o600), "\(path) has mode \(String(mode, radix: 8))")
        }
        let report = try tool.json("verify", store.url)
        #expect(report["healthy"] as? Bool == true)
        #expect((report["permissionWarnings"] as? [Any])?.isEmpty == true)
    }

    @Test(arguments: [0, 1, 2]) func theModeOptionSetsTheBitsOfEveryFileAndFolder(_ index: Int) throws {
        let store = Self.stores[index]
        try fill(store.url + "?mode=0640")
        let modes = try modes(store.name)
        for path in store.expected { #expect(modes[path] != nil, "\(path) was not created") }
        for (path, mode) in modes {
            var isFolder: ObjCBool = false
            _ = FileManager.default.fileExists(atPath: tool.url(path).path, isDirectory: &isFolder)
            #expect(mode == (isFolder.boolValue ? 0o750 : 0o640), "\(path) has mode \(String(mode, radix: 8))")
        }
    }

    @Test func verifyWarnsAboutLooserBitsNamingTheFileAndTheFixButPasses() throws {
        try fill("json:photos.json")
        let document = tool.url("photos.json").path
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: document)
        let report = try tool.json("verify", "json:photos.json")
        #expect(report["healthy"] as? Bool == true)
        let warnings = try #require(report["permissionWarnings"] as? [[String: Any]])
        #expect(warnings.count == 1)
        #expect(warnings.first?["path"] as? String == document)
        #expect(warnings.first?["mode"] as? String == "0644")
        let text = try tool.run("verify", "json:photos.json").standardOutput
        #expect(text.contains("Warning: '\(document)' has mode 0644, open to other users: run chmod 600 '\(document)'"))
    }

    @Test func aModeThatIsNotOctalOrLocksOutTheOwnerIsRefused() throws {
        for mode in ["rw-r--r--", "0800", "0400", "12345"] {
            let error = try #require(
                throws: DataStoreError.self,
                performing: { _ = try StoreRegistry.shared.configuration(for: "json:a.json?mode=\(mode)") })
            #expect(error.code == .invalidConfiguration)
            #expect(error.message.contains("'\(mode)'"))
        }
    }
}
