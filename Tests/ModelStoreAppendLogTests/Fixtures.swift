import Foundation
import ModelStore
import ModelStoreAdapterKit
import ModelStoreAppendLog
import ModelStoreTestSupport
import Testing

final class Note: PersistentModel {
    @Attribute(.unique) var title: String = ""
    @Attribute var body: String = ""
    @Attribute var rank: Int = 0
    @Attribute(.preserveValueOnDeletion) var code: String = ""
    @Attribute var tags: [String] = []
    @Attribute var created: Date = Date(timeIntervalSinceReferenceDate: 0)
    @Relationship var folder: Folder?

    let persistentBackingData = BackingData()
    init() {}
    convenience init(_ title: String, body: String = "", rank: Int = 0, code: String = "") {
        self.init()
        self.title = title
        self.body = body
        self.rank = rank
        self.code = code
    }
}

final class Folder: PersistentModel {
    @Attribute var name: String = ""
    @Relationship(deleteRule: .cascade, inverse: \Note.folder) var notes: [Note] = []

    let persistentBackingData = BackingData()
    init() {}
    convenience init(_ name: String, notes: [Note] = []) {
        self.init()
        self.name = name
        self.notes = notes
    }
}

extension TemporaryDirectory {
    /// The store directory inside it.
    var store: URL { file("store.log") }
}

let noteSchema = Schema(Note.self, Folder.self)

/// Opens an append log on `directory` directly, without a container.
func openStore(
    _ directory: URL, durability: AppendLogStoreConfiguration.Durability = .everySave,
    compaction: AppendLogStoreConfiguration.Compaction = .manual, segmentSize: Int = 64 << 20,
    schema: Schema = noteSchema
) throws -> AppendLogStore {
    let configuration = AppendLogStoreConfiguration(
        directory: directory, durability: durability, compaction: compaction, segmentSize: segmentSize, schema: schema)
    return try AppendLogStore(configuration, migrationPlan: nil)
}

/// The store's models, as comparable values: identifier and values by property name.
func contents(of store: AppendLogStore) throws -> [String: [String: String]] {
    var result: [String: [String: String]] = [:]
    for entity in store.schema.entities {
        let snapshots = try store.fetch(
            DataStoreFetchRequest<Note>(
                descriptor: FetchDescriptor(), editingState: EditingState(), query: StoreQuery(entityName: entity.name))
        ).fetchedSnapshots
        for snapshot in snapshots {
            var values: [String: String] = [:]
            for property in entity.properties { values[property.name] = snapshot.values[property.slot].description }
            result[snapshot.persistentIdentifier.description] = values
        }
    }
    return result
}

/// A snapshot of a new note, for driving a store directly.
func noteSnapshot(_ title: String, rank: Int = 0, body: String = "", code: String = "") throws -> DefaultSnapshot {
    let entity = try #require(noteSchema.entity(named: "Note"))
    return try DefaultSnapshot(
        persistentIdentifier: .temporary(entityName: "Note"), entity: entity,
        namedValues: ["title": .string(title), "rank": .int(Int64(rank)), "body": .string(body), "code": .string(code)])
}

/// Saves a request made of inserted, updated and deleted snapshots; returns the permanent identifiers of the inserted.
@discardableResult
func save(
    _ store: AppendLogStore, inserting inserted: [DefaultSnapshot] = [], updating updated: [DefaultSnapshot] = [],
    deleting deleted: [DefaultSnapshot] = [], author: String? = nil
) throws -> [PersistentIdentifier] {
    let result = try store.save(
        DataStoreSaveChangesRequest(
            editingState: EditingState(author: author), inserted: inserted, updated: updated, deleted: deleted))
    return inserted.map { result.remappedIdentifiers[$0.persistentIdentifier] ?? $0.persistentIdentifier }
}

/// The current snapshot of a model in a store.
func current(_ store: AppendLogStore, _ id: PersistentIdentifier) throws -> DefaultSnapshot {
    try #require(try store.cachedSnapshots(for: [id], editingState: EditingState())[id])
}

/// The path of a store's file, relative to its directory.
func file(_ store: URL, _ name: String) -> URL { store.appendingPathComponent(name) }

/// Every byte of a file.
func bytes(of url: URL) throws -> [UInt8] { [UInt8](try Data(contentsOf: url)) }

/// Copies a store directory to `destination`.
func copyStore(_ source: URL, to destination: URL) throws {
    try? FileManager.default.removeItem(at: destination)
    try FileManager.default.copyItem(at: source, to: destination)
    try? FileManager.default.removeItem(at: destination.appendingPathComponent("lock"))
}
