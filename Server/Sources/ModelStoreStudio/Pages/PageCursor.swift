import Foundation
import ModelStore

/// Where the next page of a sorted model list starts: the sort value of the last model shown, and
/// how many models shown so far have that value (keyset paging with ties broken by identifier).
///
/// In identifier order (no sort key) the cursor is an offset, since a store query cannot ask for the
/// identifiers after one.
struct PageCursor: Codable, Hashable, Sendable {
    /// The sort value of the last model shown, alone in the array; empty in identifier order (an array,
    /// so that a `nil` sort value survives the trip through JSON).
    var sortValue: [StoreValue]

    /// The sort value of the last model shown; `nil` in identifier order.
    var value: StoreValue? { sortValue.first }
    /// How many of the models shown have ``value`` (with ``value``), or how many were shown (without).
    var skip: Int

    /// The cursor as it travels in a link: base64url of its JSON.
    var token: String {
        let data = (try? JSONEncoder().encode(self)) ?? Data()
        return data.base64EncodedString().replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
    }

    /// A cursor from a link; throws ``StudioError/Kind/badRequest`` for one that is not a cursor.
    init(token: String) throws {
        var base64 = token.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while base64.count % 4 != 0 { base64 += "=" }
        guard let data = Data(base64Encoded: base64), let cursor = try? JSONDecoder().decode(Self.self, from: data),
            cursor.skip >= 0
        else {
            throw StudioError(.badRequest, "'\(token)' is not a page cursor", remedy: "Start again from the first page")
        }
        self = cursor
    }

    /// A cursor.
    init(value: StoreValue?, skip: Int) {
        sortValue = value.map { [$0] } ?? []
        self.skip = skip
    }

    /// The query for the page after this cursor (or the first page, for `nil`): the filter, the
    /// keyset condition, and one model more than a page, which says whether there is a next page.
    static func query(
        entityName: String, filter: StoreFilter?, sort: StoreSortKey?, after cursor: PageCursor?, pageSize: Int
    ) -> StoreQuery {
        guard let sort else {
            return StoreQuery(entityName: entityName, filter: filter, offset: cursor?.skip ?? 0, limit: pageSize + 1)
        }
        var conditions = filter.map { [$0] } ?? []
        if let cursor, let value = cursor.value {
            let path = StorePath(sort.property)
            // `nil` sorts first ascending and last descending.
            switch (sort.ascending, value) {
            case (true, .null): break
            case (true, _): conditions.append(.compare(path, .greaterOrEqual, value))
            case (false, .null): conditions.append(.compare(path, .equal, .null))
            case (false, _):
                conditions.append(.or([.compare(path, .lessOrEqual, value), .compare(path, .equal, .null)]))
            }
        }
        return StoreQuery(
            entityName: entityName, filter: StoreFilter.conjunction(conditions), sort: [sort],
            offset: cursor?.skip ?? 0, limit: pageSize + 1)
    }

    /// The cursor after a page that followed `previous`, whose models' sort values are `values`.
    static func next(after previous: PageCursor?, sorted: Bool, values: [StoreValue]) -> PageCursor? {
        guard let last = values.last else { return nil }
        guard sorted else { return PageCursor(value: nil, skip: (previous?.skip ?? 0) + values.count) }
        let trailing = values.reversed().prefix { $0 == last }.count
        if trailing == values.count, let previous, previous.value == last {
            return PageCursor(value: last, skip: previous.skip + trailing)
        }
        return PageCursor(value: last, skip: trailing)
    }
}
