import Foundation
import ModelStore
import ModelStoreAdapterKit
import ModelStoreFileIO

/// Where an append log is damaged and how: the ``DataStoreError/underlyingError`` of every
/// ``DataStoreError/Code/corrupted`` error the append log throws, and each problem that
/// ``AppendLogStore/verify(at:)`` reports.
///
/// ```swift
/// do {
///     _ = try ModelContainer(for: Trip.self, configurations: .appendLog(at: url))
/// } catch let error as DataStoreError where error.code == .corrupted {
///     if let damage = error.underlyingError as? AppendLogDamage {
///         print(damage.file, damage.offset)   // "segment-00000002.mslog", 4096
///     }
/// }
/// ```
public struct AppendLogDamage: Error, Sendable, Hashable, CustomStringConvertible {
    /// The damaged file's path relative to the store's directory, such as `segment-00000002.mslog`.
    public let file: String
    /// The byte offset in the file where the damage starts (the start of the damaged record).
    public let offset: Int
    /// What is wrong, in a few words.
    public let reason: String
    /// The code of the error opening throws: ``DataStoreError/Code/corrupted``, or
    /// ``DataStoreError/Code/unsupportedFeature`` for a file a newer ModelStore wrote.
    public let code: DataStoreError.Code
    /// What to do, when the damage calls for something other than repair.
    let remedy: String?

    /// A damage report.
    public init(file: String, offset: Int, reason: String) {
        self.init(file: file, offset: offset, reason: reason, code: .corrupted, remedy: nil)
    }

    init(file: String, offset: Int, reason: String, code: DataStoreError.Code, remedy: String?) {
        self.file = file
        self.offset = offset
        self.reason = reason
        self.code = code
        self.remedy = remedy
    }

    /// `'file' at byte offset: reason`.
    public var description: String { "'\(file)' at byte \(offset): \(reason)" }

    /// The error the store throws for this damage.
    func error(directory: URL) -> DataStoreError {
        guard code == .corrupted else {
            return DataStoreError(
                code, "cannot open the append log '\(directory.path)': \(description)", remedy: remedy,
                underlyingError: self)
        }
        return DataStoreError(
            .corrupted,
            "the append log '\(directory.path)' is damaged: \(description). It was not opened, so that no data "
                + "goes missing silently",
            remedy:
                "Run AppendLogStore.repair(at:) (or 'modelstore repair log:\(directory.path)'): it keeps every "
                + "transaction before the damage and moves the rest aside into 'damaged/'",
            underlyingError: self)
    }
}

/// A position in an append log: a segment and a byte offset in it. Every transaction's position
/// is its token for history: positions only grow, in the order transactions were saved.
public struct AppendLogPosition: Sendable, Hashable, Comparable, Codable, CustomStringConvertible {
    /// The segment's number.
    public let segment: UInt64
    /// The byte offset of the record in the segment's file.
    public let offset: Int

    /// A position.
    public init(segment: UInt64, offset: Int) {
        self.segment = segment
        self.offset = offset
    }

    /// Orders positions by segment, then offset.
    public static func < (lhs: Self, rhs: Self) -> Bool {
        (lhs.segment, lhs.offset) < (rhs.segment, rhs.offset)
    }

    /// `segment:offset`.
    public var description: String { "\(segment):\(offset)" }
}

/// The unfinished end of a log that opening (or repairing) a store cut off: what was dropped, why,
/// and what is known about it.
///
/// A crash while a record is being appended leaves a record that is cut short; so can damage from
/// outside the store (a file cut short by a copy, a disk). What the store knows is its `synced`
/// mark (see `FORMAT.md`): the last transaction a sync of the log made durable. Opening refuses a
/// log that lacks a transaction its mark recorded (``DataStoreError/Code/corrupted``), so a tail
/// that is cut off never holds one; ``syncedThrough`` says how far that guarantee reaches. The
/// dropped bytes are kept in the store's `damaged/` directory.
public struct AppendLogTornTail: Sendable, Hashable, CustomStringConvertible {
    /// Why the tail is unfinished.
    public enum Reason: Sendable, Hashable, CustomStringConvertible {
        /// The file ends inside a segment's own header: the segment was being created.
        case incompleteSegmentHeader(available: Int)
        /// The file ends inside a record's 12-byte frame header.
        case incompleteRecordHeader(available: Int)
        /// A record's header is whole, but the file ends before its payload does.
        case incompleteRecord(declared: Int, available: Int)
        /// The rest of the file is zero bytes: space the file system allocated but the crash left unwritten.
        case unwrittenSpace

        /// A sentence describing the reason.
        public var description: String {
            switch self {
            case .incompleteSegmentHeader(let available):
                "the segment's header was cut short after \(available) bytes, while the segment was being created"
            case .incompleteRecordHeader(let available):
                "the file ends \(available) bytes into a record's 12-byte header"
            case .incompleteRecord(let declared, let available):
                "a record of \(declared) bytes was cut short after \(available) bytes"
            case .unwrittenSpace:
                "the rest of the file is zero bytes that were allocated but never written"
            }
        }
    }

    /// The segment file whose end was dropped.
    public let segment: String
    /// The offset from which bytes were dropped.
    public let offset: Int
    /// How many bytes were dropped.
    public let droppedByteCount: Int
    /// Why the tail is unfinished.
    public let reason: Reason
    /// Where the dropped bytes were kept, relative to the store's directory, if they were.
    public let savedAs: String?
    /// The last transaction the log's `synced` mark recorded as durable (every one up to it is
    /// kept), or `nil` when the log has no readable mark and nothing is known.
    public internal(set) var syncedThrough: UInt64? = nil

    /// What was dropped, why, and what is known about it; claims no more than the log records.
    public var description: String {
        var text = "dropped \(droppedByteCount) bytes at the end of '\(segment)' from byte \(offset): \(reason). "
        text += "A crash during a save leaves such a tail, and so can damage from outside the store; "
        if let syncedThrough {
            text += "every transaction up to \(syncedThrough), the last the log recorded as synced, is kept"
        } else {
            text += "the log has no 'synced' mark, so whether the bytes held an acknowledged save is not known"
        }
        if let savedAs { text += "; the bytes are kept in '\(savedAs)'" }
        return text
    }
}

extension FormatError {
    /// The damage it is in file `file`, found while decoding the block at `offset`: `what` says
    /// which block (`"the segment header"`), and is left out for a format version refusal.
    func damage(file: String, at offset: Int, what: String) -> AppendLogDamage {
        guard code == .corrupted else {
            return AppendLogDamage(file: file, offset: offset, reason: reason, code: code, remedy: remedy)
        }
        return AppendLogDamage(file: file, offset: offset, reason: "\(what) does not decode: \(reason)")
    }
}
