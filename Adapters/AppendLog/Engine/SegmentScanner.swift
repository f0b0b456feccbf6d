import Foundation
import ModelStore
import ModelStoreAdapterKit
import ModelStoreFileIO

/// Reads a segment file record by record, telling a torn tail from damage.
///
/// The rules (see FORMAT.md):
/// - In the last segment, a file that ends inside the segment header, inside a record header, or
///   inside a record whose header is intact is a torn tail; so is a tail of zero bytes. Reading
///   stops before it.
/// - Anything else that fails a checksum or does not decode is damage: ``AppendLogDamage`` with
///   the segment's name and the offset of the damaged record.
struct SegmentScanner {
    /// How reading a segment ended.
    struct Result {
        /// The segment's header, unless the segment was torn inside it.
        var header: SegmentHeader?
        /// The context its records decode against.
        var context: IdentifierContext?
        /// The offset just after the header.
        var headerEnd: Int
        /// The offset just after the last whole record (where a torn tail starts).
        var end: Int
        /// The file's size.
        var byteCount: Int
        /// How many records it holds.
        var recordCount: Int
        /// The number of the last transaction read, or `nil` if it holds none.
        var lastTransaction: UInt64?
        /// The torn tail, if the segment ends in one.
        var torn: AppendLogTornTail.Reason?
    }

    /// The segment's file name, for damage reports.
    let name: String
    /// The segment's expected number.
    let number: UInt64
    /// Whether it is the last segment of the log (only the last may end torn).
    let isLast: Bool
    /// The store identifier it must carry, if known.
    let storeIdentifier: String?
    /// The number its first transaction must have, if known.
    let firstTransaction: UInt64?
    /// The cipher of an encrypted log: every record is opened with it (see ``LogCipher``).
    var cipher: LogCipher? = nil

    private func damage(_ offset: Int, _ reason: String) -> AppendLogDamage {
        AppendLogDamage(file: name, offset: offset, reason: reason)
    }

    /// Reads `bytes`, calling `visit` for each transaction with its offset and end.
    func scan(
        _ bytes: [UInt8],
        visit: (TransactionRecord, _ offset: Int, _ end: Int, IdentifierContext) throws -> Void
    ) throws -> Result {
        try bytes.withUnsafeBytes { raw in try scan(raw, visit: visit) }
    }

    private func scan(
        _ raw: UnsafeRawBufferPointer,
        visit: (TransactionRecord, _ offset: Int, _ end: Int, IdentifierContext) throws -> Void
    ) throws -> Result {
        let magicSize = segmentMagic.count
        guard raw.count >= magicSize else {
            if isLast && zip(raw, segmentMagic).allSatisfy({ $0 == $1 || $0 == 0 }) {
                return Result(
                    header: nil, context: nil, headerEnd: 0, end: 0, byteCount: raw.count, recordCount: 0,
                    lastTransaction: nil, torn: .incompleteSegmentHeader(available: raw.count))
            }
            throw damage(0, "the file is \(raw.count) bytes long, too short to be a segment")
        }
        guard raw.prefix(magicSize).elementsEqual(segmentMagic) else {
            throw damage(0, "the file does not start with the segment signature 'MSLOGSEG'")
        }
        let header: SegmentHeader
        let headerEnd: Int
        switch Frame.read(raw, at: magicSize) {
        case .frame(let payload, let end):
            do {
                header = try SegmentHeader.decode(UnsafeRawBufferPointer(rebasing: raw[payload]))
            } catch let error as FormatError {
                throw error.damage(file: name, at: magicSize, what: "the segment header")
            }
            headerEnd = end
        case .end, .incompleteHeader, .incompletePayload:
            guard isLast else { throw damage(magicSize, "the segment header is cut short") }
            return Result(
                header: nil, context: nil, headerEnd: 0, end: 0, byteCount: raw.count, recordCount: 0,
                lastTransaction: nil, torn: .incompleteSegmentHeader(available: raw.count))
        case .damagedHeader, .damagedPayload:
            throw damage(magicSize, "the segment header fails its checksum")
        }
        guard header.number == number else {
            throw damage(magicSize, "the header says segment \(header.number), but the file name says \(number)")
        }
        if let storeIdentifier, header.storeIdentifier != storeIdentifier {
            throw damage(
                magicSize, "the segment belongs to store '\(header.storeIdentifier)', not '\(storeIdentifier)'")
        }
        if let firstTransaction, header.firstTransaction != firstTransaction {
            throw damage(
                magicSize,
                "the segment starts at transaction \(header.firstTransaction), but the log before it ends at "
                    + "\(firstTransaction - 1)"
            )
        }
        let context = IdentifierContext(storeIdentifier: header.storeIdentifier, shapes: header.shapes)
        var result = Result(
            header: header, context: context, headerEnd: headerEnd, end: headerEnd, byteCount: raw.count,
            recordCount: 0, lastTransaction: nil, torn: nil)
        var expected = header.firstTransaction
        var offset = headerEnd
        while true {
            switch Frame.read(raw, at: offset) {
            case .end:
                return result
            case .frame(let payload, let end):
                let record: TransactionRecord
                do {
                    if let cipher {
                        let data = LogCipher.segmentData(store: header.storeIdentifier, segment: header.number)
                        guard let plaintext = cipher.open(raw, payload: payload, associatedData: data) else {
                            throw damage(offset, Self.unauthenticated)
                        }
                        record = try plaintext.withUnsafeBytes { try TransactionRecord.decode($0, context: context) }
                    } else {
                        record = try TransactionRecord.decode(
                            UnsafeRawBufferPointer(rebasing: raw[payload]), context: context)
                    }
                } catch let error as FormatError {
                    throw damage(offset, "the record does not decode: \(error.reason)")
                }
                guard record.number == expected else {
                    throw damage(
                        offset, "the record is transaction \(record.number), but transaction \(expected) was expected")
                }
                do {
                    try visit(record, offset, end, context)
                } catch let problem as ReplayProblem {
                    throw damage(offset, "transaction \(record.number) \(problem.reason)")
                }
                expected += 1
                result.recordCount += 1
                result.lastTransaction = record.number
                result.end = end
                offset = end
            case .incompleteHeader(let available):
                guard isLast else { throw damage(offset, "the segment ends inside a record header") }
                result.torn = .incompleteRecordHeader(available: available)
                return result
            case .incompletePayload(let declared, let available):
                guard isLast else { throw damage(offset, "the segment ends inside a record") }
                result.torn = .incompleteRecord(declared: declared, available: available)
                return result
            case .damagedHeader:
                if isLast && raw[offset...].allSatisfy({ $0 == 0 }) {
                    result.torn = .unwrittenSpace
                    return result
                }
                throw damage(offset, "the record header fails its checksum")
            case .damagedPayload:
                throw damage(offset, "the record fails its checksum")
            }
        }
    }

    /// Why an encrypted record that passed its checksum is refused.
    static let unauthenticated =
        "the encrypted record fails authentication: it was changed, or moved from another place, after it was written"

    /// The header of a segment whose first bytes are `prefix`, and the offset just after it, if it is intact.
    static func header(of prefix: [UInt8]) -> (header: SegmentHeader, end: Int)? {
        prefix.withUnsafeBytes { raw in
            guard raw.count >= segmentMagic.count, raw.prefix(segmentMagic.count).elementsEqual(segmentMagic),
                case .frame(let payload, let end) = Frame.read(raw, at: segmentMagic.count),
                let header = try? SegmentHeader.decode(UnsafeRawBufferPointer(rebasing: raw[payload]))
            else { return nil }
            return (header, end)
        }
    }

    /// Finds the records from `start` on that still pass their checksums, for repair reports.
    static func intactRecords(
        from start: Int, in bytes: [UInt8], context: IdentifierContext?, segment: UInt64 = 0, cipher: LogCipher? = nil
    ) -> (count: Int, transactions: ClosedRange<UInt64>?) {
        bytes.withUnsafeBytes { raw in
            var count = 0
            var low: UInt64?
            var high: UInt64?
            var position = start
            while position + Frame.headerSize <= raw.count {
                guard case .frame(let payload, let end) = Frame.read(raw, at: position) else {
                    position += 1
                    continue
                }
                var plaintext: [UInt8]?
                if let cipher, let context {
                    let data = LogCipher.segmentData(store: context.storeIdentifier, segment: segment)
                    plaintext = cipher.open(raw, payload: payload, associatedData: data)
                    guard plaintext != nil else {
                        position += 1
                        continue
                    }
                }
                count += 1
                if let context,
                    let record = try? (plaintext ?? Array(raw[payload])).withUnsafeBytes({
                        try TransactionRecord.decode($0, context: context)
                    })
                {
                    low = min(low ?? record.number, record.number)
                    high = max(high ?? record.number, record.number)
                }
                position = end
            }
            if let low, let high { return (count, low...high) }
            return (count, nil)
        }
    }
}
