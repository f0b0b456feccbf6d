import Foundation
import ModelStore

/// Where a JSON store's file cannot be read, and why: the ``DataStoreError/underlyingError`` of
/// every error that reading a document throws at a place in it (text that isn't JSON, a record
/// that doesn't match the schema, an unknown format version, a limit exceeded).
///
/// ```swift
/// catch let error as DataStoreError where error.code == .corrupted {
///     if let damage = error.underlyingError as? JSONFileDamage {
///         print(damage.line, damage.column)   // 12, 7
///     }
/// }
/// ```
public struct JSONFileDamage: Error, Sendable, Hashable, CustomStringConvertible {
    /// The document's path.
    public let file: String
    /// The line of the problem, from 1.
    public let line: Int
    /// The column of the problem, from 1, counting characters.
    public let column: Int
    /// The byte offset of the problem in the file.
    public let offset: Int
    /// What is wrong, in a few words; never record contents.
    public let reason: String

    /// A damage report.
    public init(file: String, line: Int, column: Int, offset: Int, reason: String) {
        self.file = file
        self.line = line
        self.column = column
        self.offset = offset
        self.reason = reason
    }

    /// `'file' at line L, column C (byte N): reason`.
    public var description: String { "'\(file)' at line \(line), column \(column) (byte \(offset)): \(reason)" }
}
