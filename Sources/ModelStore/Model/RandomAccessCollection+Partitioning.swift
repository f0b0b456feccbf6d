import Foundation

extension RandomAccessCollection {
    /// The index of the first element for which `predicate` is true, in a collection where it is
    /// false for a prefix and true for the rest.
    @inlinable
    package func partitioningIndex(where predicate: (Element) throws -> Bool) rethrows -> Index {
        var low = startIndex
        var count = distance(from: startIndex, to: endIndex)
        while count > 0 {
            let half = count / 2
            let middle = index(low, offsetBy: half)
            if try predicate(self[middle]) {
                count = half
            } else {
                low = index(after: middle)
                count -= half + 1
            }
        }
        return low
    }
}
