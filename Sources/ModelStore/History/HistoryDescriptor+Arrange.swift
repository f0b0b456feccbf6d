import Foundation

extension HistoryDescriptor where Transaction == DefaultHistoryTransaction {
    /// Sorts transactions by the descriptor (stable, oldest first among equals) and applies its limit.
    package func arrange(_ transactions: [DefaultHistoryTransaction]) -> [DefaultHistoryTransaction] {
        var result = transactions
        if !sortBy.isEmpty {
            result = result.enumerated().sorted { lhs, rhs in
                for sort in sortBy {
                    switch sort.compare(lhs.element, rhs.element) {
                    case .orderedAscending: return true
                    case .orderedDescending: return false
                    case .orderedSame: continue
                    }
                }
                return lhs.offset < rhs.offset
            }.map(\.element)
        }
        if let fetchLimit, result.count > fetchLimit { result.removeLast(result.count - max(fetchLimit, 0)) }
        return result
    }
}
