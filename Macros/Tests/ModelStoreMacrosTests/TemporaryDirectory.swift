import Foundation

/// A directory of a test's own, removed when the test ends.
final class TemporaryDirectory {
    let url: URL

    init() throws {
        url = FileManager.default.temporaryDirectory.appending(path: "ModelStoreMacrosTests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(at: url) }

    /// The store URL of each built-in store, in this directory.
    var storeURLs: [String] {
        ["memory:", "json:\(url.path)/trips.json", "log:\(url.path)/trips-log", "sqlite:\(url.path)/trips.sqlite"]
    }
}
