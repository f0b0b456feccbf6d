import Foundation
import ModelStore

/// An entity and how many models of it a store holds.
struct EntityCount: Encodable, Hashable {
    /// The entity's name.
    let name: String
    /// How many models of it the store holds.
    let modelCount: Int

    /// The entities of a schema with their counts in an open store, in schema order.
    static func all(in store: OpenedStore, progress: ProgressBar) throws -> [EntityCount] {
        progress.phase("counting", total: store.schema.entities.count)
        return try store.schema.entities.map { entity in
            defer { progress.advance() }
            return EntityCount(name: entity.name, modelCount: try store.count(of: entity.name))
        }
    }

    /// The lines of a count table, with a total.
    static func lines(_ entities: [EntityCount]) -> [String] {
        let total = entities.reduce(0) { $0 + $1.modelCount }
        let rows = entities.map { [$0.name, String($0.modelCount)] } + [["total", String(total)]]
        return Formatting.table(rows)
    }
}

/// A damaged place in a store, as `verify` reports it.
struct Problem: Encodable, Hashable, CustomStringConvertible {
    /// The damaged file, relative to the store's directory for a log, or the document's path.
    let file: String
    /// The byte offset of the damage in the file, when known.
    let offset: Int?
    /// The line of the damage (from 1), for text files.
    let line: Int?
    /// The column of the damage (from 1), for text files.
    let column: Int?
    /// What is wrong.
    let reason: String

    /// A problem at a byte offset, or at no known place.
    init(file: String, offset: Int?, line: Int? = nil, column: Int? = nil, reason: String) {
        self.file = file
        self.offset = offset
        self.line = line
        self.column = column
        self.reason = reason
    }

    /// `'file' at line L, column C (byte N): reason`.
    var description: String {
        var place = "'\(file)'"
        if let line, let column { place += " at line \(line), column \(column)" }
        if let offset { place += line == nil ? " at byte \(offset)" : " (byte \(offset))" }
        return "\(place): \(reason)"
    }
}
