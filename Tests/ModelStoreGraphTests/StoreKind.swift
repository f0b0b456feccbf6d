import Foundation
import ModelStore
import ModelStoreAppendLog
import ModelStoreInMemory
import ModelStoreJSONFile
import ModelStoreSQLite
import ModelStoreTestSupport
import Testing

/// One of the built-in stores, opened in a directory of its own so it can be reopened.
enum StoreKind: String, CaseIterable, Sendable, CustomStringConvertible {
    case memory, json, log, sqlite

    var description: String { rawValue }

    /// The configuration of this kind of store inside `directory`.
    func configuration(in directory: URL, name: String = "store") -> any DataStoreConfiguration {
        switch self {
        case .memory: InMemoryStoreConfiguration.inMemory(name: name)
        case .json:
            JSONFileStoreConfiguration.jsonFile(at: directory.appendingPathComponent("\(name).json"), name: name)
        case .log: AppendLogStoreConfiguration.appendLog(at: directory.appendingPathComponent("\(name)-log"))
        case .sqlite: SQLiteStoreConfiguration.sqlite(at: directory.appendingPathComponent("\(name).sqlite"))
        }
    }

    /// Whether closing and reopening the store keeps its contents.
    var isDurable: Bool { self != .memory }
}

/// A store of one kind in a temporary directory, opened for the graph models.
final class StoreUnderTest {
    let kind: StoreKind
    private let folder: TemporaryDirectory
    var directory: URL { folder.url }
    let schema: Schema
    private(set) var container: ModelContainer

    init(_ kind: StoreKind, types: [any PersistentModel.Type] = [Owner.self, Pet.self, Toy.self]) throws {
        self.kind = kind
        folder = try TemporaryDirectory()
        schema = Schema(types)
        container = try ModelContainer(for: schema, configurations: [kind.configuration(in: folder.url)])
    }

    /// A new container on the same store: the stored state as a fresh process would read it
    /// (the same container for the in-memory store, whose contents live only as long as it does).
    ///
    /// The stores of the previous container are closed (an append log has one writer per process),
    /// so contexts on it can no longer save.
    func reopen() throws -> ModelContainer {
        guard kind.isDurable else { return container }
        for store in container.stores { (store as? AppendLogStore)?.close() }
        container = try ModelContainer(for: schema, configurations: [kind.configuration(in: directory)])
        return container
    }

    /// Every file of the store, with its bytes, for byte-for-byte comparisons.
    func files() throws -> [String: Data] {
        var result: [String: Data] = [:]
        guard let enumerator = FileManager.default.enumerator(at: directory, includingPropertiesForKeys: nil) else {
            return result
        }
        for case let url as URL in enumerator where !url.hasDirectoryPath {
            if url.lastPathComponent == "lock" || url.pathExtension == "lock" { continue }
            result[url.path] = try Data(contentsOf: url)
        }
        return result
    }

}
