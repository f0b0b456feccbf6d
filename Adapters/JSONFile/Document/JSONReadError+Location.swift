import Foundation
import ModelStore

extension JSONReadError {
    /// The line and column (both from 1; columns count characters) of the error's offset in `input`.
    func location(in input: [UInt8]) -> (line: Int, column: Int) {
        let end = min(offset, input.count)
        var line = 1
        var lineStart = 0
        for index in 0..<end where input[index] == 0x0A {
            line += 1
            lineStart = index + 1
        }
        // Count characters, not bytes: skip UTF-8 continuation bytes.
        let column = input[lineStart..<end].reduce(1) { $1 & 0xC0 == 0x80 ? $0 : $0 + 1 }
        return (line, column)
    }

    /// The error as a ``DataStoreError`` naming the file, the line, the column and the byte offset,
    /// with a ``JSONFileDamage`` as its underlying error.
    func storeError(file path: String, input: [UInt8], backup: String?) -> DataStoreError {
        let (line, column) = location(in: input)
        let restore = backup.map { "restore the previous version from '\($0)'" } ?? "restore it from a backup"
        return DataStoreError(
            code,
            "cannot open the JSON store '\(path)': at line \(line), column \(column) (byte \(offset)): \(message)",
            remedy: remedy ?? "Fix the file by hand, or \(restore)",
            underlyingError: JSONFileDamage(file: path, line: line, column: column, offset: offset, reason: message))
    }
}
