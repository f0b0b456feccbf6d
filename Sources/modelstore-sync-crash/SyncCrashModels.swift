import Foundation
import ModelStore
import ModelStoreSync

/// A note one replica's writer made: its key names the writer and the operation that inserted it.
///
/// The key is deliberately not unique, so a model that reached the shared store twice (under two
/// global identifiers) shows up as two notes instead of being folded into one.
final class CrashNote: PersistentModel {
    @Attribute var key: String = ""
    @Attribute var writer: String = ""
    @Attribute var value: Int = 0

    let persistentBackingData = BackingData()
    init() {}
}

/// The schema of the sync crash test, with the sync entities.
let syncCrashSchema = Schema([CrashNote.self]).includingSyncMetadata()

/// The engines' configuration: pages of 4 models, so that most rounds send and read several pages
/// and a first push (of a writer's first dozen operations, see ``SyncCrashWriter``) is pipelined
/// over several, and a kill lands between and inside them.
let syncCrashConfiguration: SyncConfiguration = {
    var configuration = SyncConfiguration()
    configuration.pageSize = 4
    return configuration
}()

/// How many operations a writer applies before its first round, so that the round's push spans pages.
let syncCrashFirstRoundAfter = 12

/// The writers' operations: a fixed function of the writer and the operation's number, and each
/// idempotent, so a writer restarted after a kill repeats the one in flight safely.
///
/// In each group of four, operation `4k` inserts note `4k`, `4k+1` inserts note `4k+1`, `4k+2`
/// sets note `4k+1`'s value, and `4k+3` deletes note `4k`.
enum SyncCrashWorkload {
    enum Operation: Equatable {
        case insert(key: String, value: Int)
        case update(key: String, value: Int)
        case delete(key: String)
    }

    static func key(_ writer: String, _ number: Int) -> String { "\(writer)-\(number)" }

    static func operation(_ number: Int, writer: String) -> Operation {
        switch number % 4 {
        case 2: .update(key: key(writer, number - 1), value: 1000 + number)
        case 3: .delete(key: key(writer, number - 3))
        default: .insert(key: key(writer, number), value: number)
        }
    }

    /// A writer's notes after its first `count` operations, by key.
    static func expected(writer: String, count: Int) -> [String: Int] {
        var notes: [String: Int] = [:]
        for number in 0..<count {
            switch operation(number, writer: writer) {
            case .insert(let key, let value): notes[key] = value
            case .update(let key, let value): notes[key] = value
            case .delete(let key): notes[key] = nil
            }
        }
        return notes
    }

    /// Applies operation `number` in one save, unless its effect is there already.
    static func apply(_ number: Int, writer: String, context: ModelContext) throws {
        switch operation(number, writer: writer) {
        case .insert(let key, let value):
            guard try note(key, in: context) == nil else { return }
            let note = CrashNote()
            note.key = key
            note.writer = writer
            note.value = value
            context.insert(note)
        case .update(let key, let value):
            guard let note = try note(key, in: context), note.value != value else { return }
            note.value = value
        case .delete(let key):
            guard let note = try note(key, in: context) else { return }
            context.delete(note)
        }
        try context.save()
    }

    private static func note(_ key: String, in context: ModelContext) throws -> CrashNote? {
        try context.fetch(FetchDescriptor<CrashNote>(predicate: #Predicate { $0.key == key })).first
    }
}

/// A failure of the test's own tooling, with what went wrong.
struct SyncCrashError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
