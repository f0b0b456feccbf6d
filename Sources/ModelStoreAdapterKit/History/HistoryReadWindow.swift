import Foundation
import ModelStore

/// The rows of a store's history table that a `HistoryDescriptor` can select, so that a store
/// reads only those: the transactions numbered after ``after``, and of them only the oldest (or
/// newest) ``limit``.
///
/// A store reads the window's rows, then answers the descriptor from them with
/// ``StoreHistory/transactions(_:schema:storeIdentifier:)`` exactly as it would from every row: the
/// window only leaves out rows the descriptor cannot select. It is found from the descriptor's
/// shape: a predicate that is, or is a conjunction containing, `$0.token > token` (or `>=`, or the
/// same on `transactionIdentifier`) bounds the numbers; a limit is pushed down only when nothing
/// else filters and the order is by number (oldest first, or newest first as in
/// `SortDescriptor(\.transactionIdentifier, order: .reverse)`). Any other descriptor reads every row.
public struct HistoryReadWindow: Sendable, Equatable {
    /// Only transactions numbered above this can be selected; `nil` when the oldest can be.
    public var after: Int64?
    /// At most this many rows are needed, counted from the oldest (from the newest when
    /// ``newestFirst``); `nil` when every row in the window may be.
    public var limit: Int?
    /// Whether ``limit`` counts from the newest transaction.
    public var newestFirst: Bool

    /// The window of every row.
    public init() {
        after = nil
        limit = nil
        newestFirst = false
    }

    /// The window of the rows `descriptor` can select among the transactions of the store
    /// `storeIdentifier`.
    public init(_ descriptor: HistoryDescriptor<DefaultHistoryTransaction>, storeIdentifier: String) {
        self.init()
        var filtersOnlyByNumber = true
        if let predicate = descriptor.predicate {
            let bound = (predicate.expression as? any HistoryNumberBoundExpression)?.numberBound(
                storeIdentifier: storeIdentifier)
            after = bound?.after
            filtersOnlyByNumber = bound?.isWhole ?? false
        }
        guard filtersOnlyByNumber, let fetchLimit = descriptor.fetchLimit,
            let newestFirst = Self.numberOrder(descriptor.sortBy)
        else { return }
        limit = max(fetchLimit, 0)
        self.newestFirst = newestFirst
    }

    /// Whether `sortBy` orders by number newest first (`true`) or oldest first (`false`, also when
    /// empty); `nil` for any other order.
    private static func numberOrder(_ sortBy: [SortDescriptor<DefaultHistoryTransaction>]) -> Bool? {
        guard let sort = sortBy.first else { return false }
        let byNumber: [PartialKeyPath<DefaultHistoryTransaction>] = [\.token, \.transactionIdentifier]
        guard sortBy.count == 1, let keyPath = sort.keyPath, byNumber.contains(keyPath) else { return nil }
        return sort.order == .reverse
    }
}

/// A lower bound on the transaction numbers a predicate expression accepts.
struct HistoryNumberBound: Equatable {
    /// Only numbers above this are accepted.
    var after: Int64
    /// Whether the expression accepts exactly the numbers above ``after`` (and filters on nothing else).
    var isWhole: Bool
}

/// A predicate expression over history transactions that can tell a lower bound on the numbers it
/// accepts: the comparisons of a token or number with a constant, and conjunctions.
protocol HistoryNumberBoundExpression {
    /// The bound, or `nil` when the expression sets none that a store can use.
    func numberBound(storeIdentifier: String) -> HistoryNumberBound?
}

extension PredicateExpressions.Comparison: HistoryNumberBoundExpression {
    func numberBound(storeIdentifier: String) -> HistoryNumberBound? {
        typealias Transaction = PredicateExpressions.Variable<DefaultHistoryTransaction>
        let number: Int64
        if let path = lhs as? PredicateExpressions.KeyPath<Transaction, DefaultHistoryToken>,
            path.keyPath == \DefaultHistoryTransaction.token,
            let token = (rhs as? PredicateExpressions.Value<DefaultHistoryToken>)?.value
        {
            // Tokens of another store compare by the store's identifier, not by number.
            guard token.storeIdentifier == storeIdentifier else { return nil }
            number = token.transactionNumber
        } else if let path = lhs as? PredicateExpressions.KeyPath<Transaction, Int64>,
            path.keyPath == \DefaultHistoryTransaction.transactionIdentifier,
            let value = (rhs as? PredicateExpressions.Value<Int64>)?.value
        {
            number = value
        } else {
            return nil
        }
        switch op {
        case .greaterThan: return HistoryNumberBound(after: number, isWhole: true)
        case .greaterThanOrEqual where number > .min: return HistoryNumberBound(after: number - 1, isWhole: true)
        default: return nil
        }
    }
}

extension PredicateExpressions.Conjunction: HistoryNumberBoundExpression {
    func numberBound(storeIdentifier: String) -> HistoryNumberBound? {
        let bounds = [lhs as? any HistoryNumberBoundExpression, rhs as? any HistoryNumberBoundExpression]
            .compactMap { $0?.numberBound(storeIdentifier: storeIdentifier)?.after }
        // The other side filters too, so a limit cannot be pushed down.
        return bounds.max().map { HistoryNumberBound(after: $0, isWhole: false) }
    }
}
