import Foundation
import ModelStore
import ModelStoreAdapters
import ModelStoreSync

/// A note that belongs to one user: what the sync server's tests sync.
public final class Note: PersistentModel {
    /// The subject of the user it belongs to.
    @Attribute public var owner: String = ""
    /// Its title, the same on every replica.
    @Attribute public var title: String = ""
    /// Its text.
    @Attribute public var body: String = ""
    /// How often it was edited.
    @Attribute public var edits: Int = 0

    /// Required by `PersistentModel`.
    public let persistentBackingData = BackingData()
    /// An empty note.
    public init() {}
    /// A note of `owner`.
    public convenience init(owner: String, title: String, body: String = "") {
        self.init()
        self.owner = owner
        self.title = title
        self.body = body
    }
}

/// The schema of the tests' stores: notes and the sync entities.
public enum SyncTestSchema {
    /// The schema, sync entities included.
    public static let schema = Schema([Note.self]).includingSyncMetadata()

    /// `schema` as the server's `--schema` file holds it.
    public static func write(_ schema: Schema = SyncTestSchema.schema, to url: URL) throws {
        try JSONEncoder().encode(schema.storedDescription).write(to: url)
    }

    /// Every note in `container` as `owner/title: body (edits)`, sorted.
    public static func notes(in container: ModelContainer) throws -> [String] {
        try ModelContext(container).fetch(FetchDescriptor<Note>()).map {
            "\($0.owner)/\($0.title): \($0.body) (\($0.edits))"
        }.sorted()
    }
}
