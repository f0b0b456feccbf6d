import Foundation
import ModelStore
import ModelStoreAdapterKit

extension PostgreSQLStore: HistoryProviding {
    /// The transactions `descriptor` selects, read from the database as it is now, so that every
    /// process's and connection's saves are included. The store keeps at most
    /// ``PostgreSQLStoreConfiguration/historyLimit`` changes (see ``HistoryLog``).
    public func fetchHistory(
        _ descriptor: HistoryDescriptor<DefaultHistoryTransaction>
    ) throws -> [DefaultHistoryTransaction] {
        let history = self.history
        let storeIdentifier = identifier
        let loaded = try database.wait {
            try await self.database.read("reading the history") { session in
                try await history.load(storeIdentifier: storeIdentifier, on: session)
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
