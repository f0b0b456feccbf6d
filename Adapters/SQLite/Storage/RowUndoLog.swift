import Foundation
import ModelStore

/// The states rows had before a two-phase save changed them, so that a save already committed can
/// be undone when another store's part of the same save fails.
///
/// Each row is recorded once, before its first change: with its snapshot when it existed, or as
/// absent when the save inserted it. Undoing deletes the rows that were absent, rewrites the rows
/// that still exist, and inserts the rows that were deleted, in that order, so unique values move
/// back without colliding. The key counter is not wound back: identifiers are never reused.
final class RowUndoLog {
    private(set) var states: [(id: PersistentIdentifier, key: Int64, before: DefaultSnapshot?)] = []
    private var recorded: Set<PersistentIdentifier> = []

    /// Records the row's present state, unless it was recorded already; `reader` is `nil` for a
    /// row the save inserts (it did not exist before).
    func record(_ id: PersistentIdentifier, key: Int64, layout: EntityLayout, reader: RowReader?) throws {
        guard recorded.insert(id).inserted else { return }
        let before = try reader?.snapshot(key, layout: layout)
        states.append((id, key, before))
    }

    /// Puts every recorded row back as it was, inside the writer's transaction.
    func undo(with writer: RowWriter) throws {
        let reader = writer.reader
        var rewritten: [DefaultSnapshot] = []
        var restored: [DefaultSnapshot] = []
        for state in states {
            let layout = try writer.layout(state.id.entityName)
            let exists = try reader.exists(state.key, layout: layout)
            switch (state.before, exists) {
            case (nil, true): try writer.delete([state.id])
            case (nil, false): break
            case (let before?, true): rewritten.append(before)
            case (let before?, false): restored.append(before)
            }
        }
        try writer.write(rewritten, update: true)
        try writer.write(restored, update: false)
    }
}
