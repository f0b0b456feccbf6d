import Foundation
import ModelStore
import ModelStoreAdapterKit

extension PostgreSQLStore: HistoryProviding {
    /// The transactions `descriptor` selects, read from the database as it is now, so that every
    /// process's and connection's saves are included. The store keeps at most
    /// ``PostgreSQLStoreConfiguration/historyLimit`` changes (see ``HistoryLog``). Only the rows the
    /// descriptor can select are read (``HistoryReadWindow``): a fetch after a token reads the rows
    /// after it.
    public func fetchHistory(
        _ descriptor: HistoryDescriptor<DefaultHistoryTransaction>
    ) throws -> [DefaultHistoryTransaction] {
        let history = self.history
        let storeIdentifier = identifier
        let window = HistoryReadWindow(descriptor, storeIdentifier: storeIdentifier)
        let loaded = try database.wait {
            try await self.database.read("reading the history") { session in
                try await history.load(storeIdentifier: storeIdentifier, window: window, on: session)
            }
        }
        return try loaded.transactions(descriptor, schema: schema, storeIdentifier: identifier)
    }

    /// Deletes the transactions `descriptor` selects, in one transaction; tokens that point into
    /// them expire.
    public func deleteHistory(_ descriptor: HistoryDescriptor<DefaultHistoryTransaction>) throws {
        let history = self.history
        let (schema, storeIdentifier) = (schema, identifier)
        try database.wait {
            try await self.database.transaction("deleting history") { session in
                _ = try await history.delete(
                    descriptor, schema: schema, storeIdentifier: storeIdentifier, on: session)
            }
        }
    }
}
