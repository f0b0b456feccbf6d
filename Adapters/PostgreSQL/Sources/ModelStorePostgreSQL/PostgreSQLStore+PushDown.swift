import Foundation
import ModelStore

extension PostgreSQLStore {
    /// What SQL does with the condition, kept per condition shape as the plan of a query is:
    /// - `.exact` when SQL runs all of it (see `FilterTranslator`);
    /// - `.inexact` when SQL only narrows the rows to a superset of its matches: a text search (the
    ///   byte test on NFC forms) or a condition SQL translates in part, through relationships too.
    ///   The context re-checks it on what the store returns (on models when it reads through
    ///   relationships);
    /// - `.unsupported` when SQL runs none of it: the context evaluates it, and the store never
    ///   receives it from the context.
    ///
    /// Whatever the answer, the store applies every query it receives exactly (rule 2 of
    /// `DataStoreQuerying`): ``queryCapabilities`` declares every kind, so a caller that sends a
    /// query itself (the context's duplicate lookups, sync scopes, ModelStore Studio) relies on it.
    /// What SQL does not decide, the store checks on the rows SQL returns, loading the related rows
    /// such a condition reads. A query that allows inexact matches (`StoreQuery.allowsInexactMatches`,
    /// set by the context, which checks its inexact conditions itself) gets the rows SQL narrows
    /// those conditions to, without that check.
    public func pushDown(_ filter: StoreFilter, entityName: String) -> StorePushDown {
        guard let layout = layouts[entityName] else { return .unsupported }
        let layouts = self.layouts
        let storeIdentifier = identifier
        return queryCache.withLock { cache in
            cache.pushDown(filter, entityName: entityName) {
                var translator = FilterTranslator(layouts: layouts, storeIdentifier: storeIdentifier)
                let split = translator.split(filter, layout: layout)
                if split.residual.isEmpty { return .exact }
                return split.sql.isEmpty ? .unsupported : .inexact
            }
        }
    }
}
