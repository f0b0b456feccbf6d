import Foundation
import ModelStore
import ModelStoreAdapterKit

extension SQLiteStore: HistoryProviding {
    /// The transactions `descriptor` selects, read from the database as it is now, so that other
    /// processes' saves are included. The database keeps at most
    /// ``SQLiteStoreConfiguration/historyLimit`` changes. Only the rows the descriptor can select
    /// are read (``HistoryReadWindow``): a fetch after a token reads the rows after it.
    public func fetchHistory(
        _ descriptor: HistoryDescriptor<DefaultHistoryTransaction>
    ) throws -> [DefaultHistoryTransaction] {
        let window = HistoryReadWindow(descriptor, storeIdentifier: identifier)
        let history = try database.withLock { connection in
            try connection.readTransaction {
                try HistoryTable.load(storeIdentifier: identifier, window: window, from: connection)
            }
        }
        return try history.transactions(descriptor, schema: schema, storeIdentifier: identifier)
    }

    /// Deletes the transactions `descriptor` selects, in one write transaction; tokens that point
    /// into them expire.
    public func deleteHistory(_ descriptor: HistoryDescriptor<DefaultHistoryTransaction>) throws {
        try withWriter { writer in
            let old = try HistoryTable.load(storeIdentifier: identifier, from: writer.connection)
            var history = old
            guard try history.delete(descriptor, schema: schema, storeIdentifier: identifier) else { return }
            try HistoryTable.store(history, replacing: old, on: writer.connection)
        }
    }
}
