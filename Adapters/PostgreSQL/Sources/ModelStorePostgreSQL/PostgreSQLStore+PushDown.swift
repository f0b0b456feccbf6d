import Foundation
import ModelStore

extension PostgreSQLStore {
    /// Exactly when the store applies the condition with Swift's results: when SQL runs all of it
    /// (see `FilterTranslator`), or when the store checks it on the rows SQL returns because SQL
    /// narrows them (a text search: its byte form on NFC texts) or because it reads through
    /// relationships (the store loads the related rows itself). Otherwise not at all: the context
    /// evaluates it on snapshots, and the store receives only what it runs. The answer is kept per
    /// condition shape, as the plan of a query is.
    public func pushDown(_ filter: StoreFilter, entityName: String) -> StorePushDown {
        guard let layout = layouts[entityName] else { return .unsupported }
        let layouts = self.layouts
        let storeIdentifier = identifier
        return queryCache.withLock { cache in
            cache.pushDown(filter, entityName: entityName) {
                var translator = FilterTranslator(layouts: layouts, storeIdentifier: storeIdentifier)
                let split = translator.split(filter, layout: layout)
                let runsItself = filter.traversesRelationships || !split.sql.isEmpty
                return split.residual.isEmpty || runsItself ? .exact : .unsupported
            }
        }
    }
}
