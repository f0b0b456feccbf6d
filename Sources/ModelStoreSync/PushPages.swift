import Foundation
import ModelStore

/// The pages of local models a push reads: the models it lists, a page at a time, or every model of
/// some entities, read a page at a time in identifier order, so a first push never holds more than
/// a page of them.
struct PushPages {
    /// One page: the models' identifiers, and the models when the page read them already.
    struct Page {
        var ids: [PersistentIdentifier]
        var models: [PersistentIdentifier: DefaultSnapshot]?
    }

    private var listed: ArraySlice<PersistentIdentifier>
    private let entities: [String]
    private let size: Int
    private var entityIndex = 0
    private var offset = 0

    /// The pages of `ids`, then of every model of `entities`, `size` models each.
    init(ids: [PersistentIdentifier], entities: [String], size: Int) {
        listed = ids[...]
        self.entities = entities
        self.size = max(1, size)
    }

    /// The next page, or `nil` after the last.
    mutating func next(_ store: SyncStore) throws -> Page? {
        if !listed.isEmpty {
            let page = Array(listed.prefix(size))
            listed = listed.dropFirst(size)
            return Page(ids: page, models: nil)
        }
        while entityIndex < entities.count {
            let rows = try store.fetch(entities[entityIndex], offset: offset, limit: size)
            offset += rows.count
            if rows.count < size {
                entityIndex += 1
                offset = 0
            }
            guard !rows.isEmpty else { continue }
            let models = Dictionary(rows.map { ($0.persistentIdentifier, $0) }, uniquingKeysWith: { $1 })
            return Page(ids: rows.map(\.persistentIdentifier), models: models)
        }
        return nil
    }
}
