import Foundation

extension ModelContext {
    /// The transactions `descriptor` selects from the history of every store of the container that
    /// keeps history (``HistoryProviding``): SwiftData's `fetchHistory(_:)`.
    ///
    /// ```swift
    /// let descriptor = HistoryDescriptor<DefaultHistoryTransaction>(predicate: #Predicate { $0.token > lastToken })
    /// for transaction in try context.fetchHistory(descriptor) { … }
    /// ```
    ///
    /// Results come oldest first (by timestamp across stores, by token within one) unless the
    /// descriptor sorts them; its limit applies to the whole result.
    ///
    /// - Throws: ``DataStoreError/Code/historyTokenExpired`` when the predicate asks for transactions
    ///   from before history that was deleted; ``DataStoreError/Code/unsupportedFeature`` when no
    ///   store keeps history or the transaction type is not ``DefaultHistoryTransaction``.
    public func fetchHistory<T: HistoryTransaction>(_ descriptor: HistoryDescriptor<T>) throws -> [T] {
        let (stores, descriptor) = try historyStores(for: descriptor)
        var unlimited = descriptor
        unlimited.fetchLimit = nil
        var transactions: [DefaultHistoryTransaction] = []
        for store in stores { transactions += try store.fetchHistory(stores.count == 1 ? descriptor : unlimited) }
        if stores.count > 1 {
            if descriptor.sortBy.isEmpty {
                transactions.sort { ($0.timestamp, $0.token) < ($1.timestamp, $1.token) }
            }
            transactions = descriptor.arrange(transactions)
        }
        // `historyStores` checked that T is DefaultHistoryTransaction.
        return transactions as! [T]
    }

    /// Deletes the transactions `descriptor` selects from every store's history: SwiftData's
    /// `deleteHistory(_:)`. Tokens that point into deleted history expire.
    public func deleteHistory<T: HistoryTransaction>(_ descriptor: HistoryDescriptor<T>) throws {
        let (stores, descriptor) = try historyStores(for: descriptor)
        for store in stores { try store.requireAllowsSave("deleting history") }
        for store in stores { try store.deleteHistory(descriptor) }
    }

    private func historyStores<T: HistoryTransaction>(
        for descriptor: HistoryDescriptor<T>
    ) throws -> ([any HistoryProviding], HistoryDescriptor<DefaultHistoryTransaction>) {
        guard let descriptor = descriptor as? HistoryDescriptor<DefaultHistoryTransaction> else {
            throw DataStoreError(
                .unsupportedFeature, "ModelStore's stores keep history as DefaultHistoryTransaction, not '\(T.self)'",
                remedy: "Use HistoryDescriptor<DefaultHistoryTransaction>")
        }
        let stores = container.channels.compactMap(\.history)
        guard !stores.isEmpty else {
            let names = container.configurations.map { "'\($0.name)'" }.joined(separator: ", ")
            throw DataStoreError(
                .unsupportedFeature, "no store of the container (\(names)) keeps history",
                remedy:
                    "Use a store whose adapter conforms to HistoryProviding (memory:, json:, log:, sqlite:, postgres:)")
        }
        return (stores, descriptor)
    }
}
