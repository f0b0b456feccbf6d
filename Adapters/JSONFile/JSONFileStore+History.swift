import Foundation
import ModelStore
import ModelStoreAdapterKit

extension JSONFileStore {
    /// The transactions `descriptor` selects, from the file as it is now (reloaded first if another
    /// process saved it). The file keeps at most ``JSONFileStoreConfiguration/historyLimit`` changes.
    public func fetchHistory(
        _ descriptor: HistoryDescriptor<DefaultHistoryTransaction>
    ) throws -> [DefaultHistoryTransaction] {
        try reloadIfChanged()
        let history = writer.withLock { $0.history.records }
        return try history.transactions(descriptor, schema: schema, storeIdentifier: identifier)
    }

    /// Deletes the transactions `descriptor` selects and saves the file.
    public func deleteHistory(_ descriptor: HistoryDescriptor<DefaultHistoryTransaction>) throws {
        try write { base, _, state in
            let deleted = try state.history.records.delete(descriptor, schema: schema, storeIdentifier: identifier)
            return (deleted ? base : nil, ())
        }
    }
}
