import Foundation
import ModelStore
import ModelStoreAdapterKit

/// The history a JSON document keeps under its top-level `history` key, bounded by the
/// configuration's ``JSONFileStoreConfiguration/historyLimit``, with each transaction's encoded
/// line kept so a save encodes only the new one.
///
/// ```json
/// "history": {"deletedThrough": 0, "lastTransaction": 2, "transactions": [
///     {"author":null,"changes":[…],"number":1,"timestamp":785000000.5},
///     {"author":"sync","changes":[…],"number":2,"timestamp":785000001.25}
///   ]}
/// ```
struct JSONFileHistory: Sendable {
    /// The document's key.
    static let key = "history"

    /// The transactions kept.
    var records: StoreHistory
    /// Each kept transaction's line, by number.
    private var lines: [Int64: [UInt8]] = [:]

    /// An empty history (a new file).
    init(limit: Int? = JSONFileStoreConfiguration.defaultHistoryLimit) {
        self.init(records: StoreHistory(limit: limit))
    }

    private init(records: StoreHistory) { self.records = records }

    /// The history a document's `history` value holds (`nil`: the document has none).
    init(_ json: [UInt8]?, limit: Int?, document: String) throws {
        guard let json else {
            self.init(limit: limit)
            return
        }
        let stored: Stored
        do {
            stored = try JSONDecoder().decode(Stored.self, from: Data(json))
        } catch {
            throw DataStoreError(
                .corrupted, "the 'history' of the JSON store '\(document)' cannot be read: \(error)",
                remedy:
                    "Remove the 'history' key from the file and open it with acceptsHandEdits (or run "
                    + "'modelstore seal json:\(document)'); history starts again and older tokens expire")
        }
        self.init(
            records: StoreHistory(
                records: stored.transactions, lastNumber: stored.lastTransaction,
                expiredThrough: stored.deletedThrough, limit: limit))
    }

    /// The `history` value to write.
    mutating func encoded() -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        var kept: [Int64: [UInt8]] = [:]
        var out = Array(
            "{\"deletedThrough\": \(records.expiredThrough), \"lastTransaction\": \(records.lastNumber), \"transactions\": ["
                .utf8)
        for (index, record) in records.records.enumerated() {
            // Records are plain values (numbers, strings, identifiers, stored values): they encode.
            let line = lines[record.number] ?? Array((try? encoder.encode(record)) ?? Data("{}".utf8))
            kept[record.number] = line
            out += Array((index == 0 ? "\n    " : ",\n    ").utf8)
            out += line
        }
        out += Array((records.records.isEmpty ? "]}" : "\n  ]}").utf8)
        lines = kept
        return out
    }

    private struct Stored: Codable {
        var deletedThrough: Int64
        var lastTransaction: Int64
        var transactions: [StoreHistoryRecord]
    }
}
