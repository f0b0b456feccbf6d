import Foundation
import ModelStoreAdapters
import ModelStoreMacros

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

extension TemporaryDirectory {
    /// Gives `write` a container on built-in store number `store` in this directory, then gives
    /// `read` a context on the same store opened again (`memory:` keeps nothing across
    /// containers, so it is read through the same container).
    func writeThenReopen(
        store: Int, schema: Schema, write: (ModelContainer) throws -> Void, read: (ModelContext) throws -> Void
    ) throws {
        let url = storeURLs[store]
        var first: ModelContainer? = try ModelContainer(for: schema, url: url)
        try write(first!)
        if url != "memory:" { first = nil }
        try read(ModelContext(try first ?? ModelContainer(for: schema, url: url)))
    }
}
