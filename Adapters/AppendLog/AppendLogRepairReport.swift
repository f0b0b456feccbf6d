import Foundation
import ModelStore

/// What ``AppendLogStore/repair(at:)`` did: what it found, what it kept, and exactly what it set aside.
public struct AppendLogRepairReport: Sendable, Hashable, CustomStringConvertible {
    /// A run of bytes moved out of the log into `damaged/`.
    public struct SetAside: Sendable, Hashable, CustomStringConvertible {
        /// The file the bytes came from, relative to the store's directory.
        public let file: String
        /// The offset in that file where the set-aside bytes start (0: the whole file).
        public let offset: Int
        /// How many bytes were set aside.
        public let byteCount: Int
        /// Where they are now, relative to the store's directory.
        public let savedAs: String
        /// How many records in them still pass their checksums (the damaged one excluded): data
        /// that was set aside because it follows the damage, and that a specialist could recover.
        public let intactRecordCount: Int
        /// The transaction numbers of those intact records, when they could be decoded.
        public let transactions: ClosedRange<UInt64>?

        /// What was moved where.
        public var description: String {
            var text = "'\(file)' from byte \(offset): \(byteCount) bytes moved to '\(savedAs)'"
            text += ", holding \(intactRecordCount) intact record\(intactRecordCount == 1 ? "" : "s")"
            if let transactions {
                text +=
                    transactions.count == 1
                    ? " (transaction \(transactions.lowerBound))"
                    : " (transactions \(transactions.lowerBound)–\(transactions.upperBound))"
            }
            return text
        }
    }

    /// The first damage found in the live log, if any.
    public let damage: AppendLogDamage?
    /// Damage found in `history/`, which the repair also cut back.
    public let historyDamage: [AppendLogDamage]
    /// The number of the last transaction the repaired log keeps.
    public let lastKeptTransaction: UInt64
    /// Everything moved into `damaged/`, in the order it was moved.
    public let setAside: [SetAside]
    /// The torn tail cut off, if the log ended in one.
    public let tornTail: AppendLogTornTail?
    /// Whether the manifest was unreadable and was rebuilt from the checkpoint and segments.
    public let rebuiltManifest: Bool
    /// Whether a damaged checkpoint was replaced by replaying the segments kept in `history/`.
    public let rebuiltFromHistory: Bool

    /// Whether the repair changed anything.
    public var changedAnything: Bool {
        !setAside.isEmpty || tornTail != nil || rebuiltManifest || rebuiltFromHistory
    }

    /// What was found, kept and set aside.
    public var description: String {
        guard changedAnything else {
            return "nothing to repair: the log is whole through transaction \(lastKeptTransaction)"
        }
        var lines: [String] = []
        if let damage { lines.append("found damage in \(damage)") }
        for damage in historyDamage { lines.append("found damage in history: \(damage)") }
        if rebuiltManifest { lines.append("rebuilt the manifest from the checkpoint and segments") }
        if rebuiltFromHistory { lines.append("replaced the damaged checkpoint by the segments kept in 'history/'") }
        lines.append("kept every transaction through \(lastKeptTransaction)")
        for item in setAside { lines.append("set aside \(item)") }
        if let tornTail { lines.append("cut a torn tail: \(tornTail)") }
        return lines.joined(separator: "\n")
    }
}
