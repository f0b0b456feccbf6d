import Foundation
import ModelStore

/// A page of an entity's models: the filter box, the models in keyset pages, and beside them how
/// the store runs the query.
struct ModelListPage {
    /// Models on a page.
    static let pageSize = 50

    let store: StudioStore
    let entity: Schema.Entity
    /// The filter as typed.
    let filterText: String
    /// The attribute to sort by, if the user chose one.
    let sortProperty: String?
    /// Whether the sort is descending.
    let descending: Bool
    /// The cursor of the page, from its link.
    let cursorToken: String?
    /// Whether to count the matching models exactly.
    let countsExactly: Bool

    /// The attribute pages are sorted by when the user chose none: the first unique attribute, else
    /// the first indexed one, so that pages are read from an index; `nil` (identifier order) when the
    /// entity has neither.
    static func defaultSortProperty(of entity: Schema.Entity) -> String? {
        if let unique = entity.attributes.first(where: { $0.isUnique && isSortable($0) }) { return unique.name }
        for index in entity.indices {
            if let first = index.first, let attribute = entity.attribute(named: first), isSortable(attribute) {
                return first
            }
        }
        return nil
    }

    /// Whether models can be sorted by an attribute (scalars only).
    static func isSortable(_ attribute: Schema.Attribute) -> Bool {
        switch attribute.valueType.unwrapped {
        case .data, .array, .dictionary, .composite: false
        default: true
        }
    }

    func render() throws -> String {
        var notice = ""
        var filter: StoreFilter?
        do {
            filter = try FilterParser(schema: store.schema).parse(filterText, entity: entity)
        } catch {
            notice = "<div class=\"error\" id=\"filter-error\">\(HTML.escape(error.description))</div>"
        }
        let sortName = sortProperty ?? Self.defaultSortProperty(of: entity)
        var sortKey: StoreSortKey?
        if let sortName {
            guard let attribute = entity.attribute(named: sortName), Self.isSortable(attribute) else {
                throw StudioError(
                    .badRequest, "'\(entity.name)' has no attribute '\(sortName)' to sort by",
                    remedy: "Sort by one of "
                        + entity.attributes.filter(Self.isSortable).map { "'\($0.name)'" }
                        .joined(separator: ", "))
            }
            sortKey = StoreSortKey(property: sortName, ascending: !descending)
        }
        let cursor = try cursorToken.map(PageCursor.init(token:))
        var rows = ""
        var nextLink = ""
        var explain = ""
        var countLine = ""
        if notice.isEmpty {
            let query = PageCursor.query(
                entityName: entity.name, filter: filter, sort: sortKey, after: cursor, pageSize: Self.pageSize)
            var snapshots = try store.fetch(query)
            let hasMore = snapshots.count > Self.pageSize
            if hasMore { snapshots.removeLast() }
            rows = snapshots.map(row).joined(separator: "\n")
            if hasMore {
                let values = snapshots.map { snapshot in
                    sortKey.flatMap { entity.attribute(named: $0.property) }.map { snapshot.values[$0.slot] } ?? .null
                }
                if let next = PageCursor.next(after: cursor, sorted: sortKey != nil, values: values) {
                    nextLink = "<a id=\"next\" href=\"\(link(cursor: next.token))\">next page →</a>"
                }
            }
            explain = explanation(query: query, sorted: sortKey != nil)
            if countsExactly {
                let count = try store.count(StoreQuery(entityName: entity.name, filter: filter))
                countLine = "\(count.formatted()) matching (exact)"
            } else {
                countLine = "<a id=\"count\" href=\"\(link(cursor: nil, exact: true))\">count matching models</a>"
            }
            if snapshots.isEmpty { rows = "<tr><td colspan=\"99\" class=\"muted\">no models</td></tr>" }
        }
        let first = cursor == nil ? "" : "<a href=\"\(link(cursor: nil))\">← first page</a>"
        let filterHelp = "age >= 65 &amp;&amp; name.contains(&quot;a&quot;)"
        return """
            <h1>\(HTML.escape(entity.name))</h1>
            <form class="filter" method="get" action="/entities/\(HTML.component(entity.name))">
            <input type="text" name="filter" id="filter" value="\(HTML.escape(filterText))" placeholder="\(filterHelp)">
            \(sortProperty.map { "<input type=\"hidden\" name=\"sort\" value=\"\(HTML.escape($0))\">" } ?? "")
            \(descending ? "<input type=\"hidden\" name=\"order\" value=\"desc\">" : "")
            <button type="submit">Filter</button></form>
            \(notice)
            <div class="layout"><div>
            <table id="models"><tr><th>id</th>\(headers(sortName: sortName))</tr>
            \(rows)</table>
            <div class="pager">\(first) \(nextLink) <span class="muted">\(countLine)</span></div>
            </div>\(explain)</div>
            """
    }

    private func headers(sortName: String?) -> String {
        var cells = ""
        for property in entity.properties {
            switch property {
            case .attribute(let attribute) where Self.isSortable(attribute):
                let isCurrent = attribute.name == sortName
                let order = isCurrent && !descending ? "desc" : nil
                let arrow = isCurrent ? (descending ? " ▼" : " ▲") : ""
                let href =
                    "/entities/\(HTML.component(entity.name))"
                    + HTML.query([("filter", filterText), ("sort", attribute.name), ("order", order)])
                cells += "<th><a href=\"\(href)\">\(HTML.escape(attribute.name))\(arrow)</a></th>"
            default:
                cells += "<th>\(HTML.escape(property.name))</th>"
            }
        }
        return cells
    }

    private func row(_ snapshot: DefaultSnapshot) -> String {
        var cells = "<td>\(ModelLink.anchor(snapshot.persistentIdentifier, showsEntity: false))</td>"
        for property in entity.properties {
            let value = snapshot.values[property.slot]
            let name = HTML.escape(property.name)
            switch property {
            case .attribute:
                cells += "<td data-property=\"\(name)\">\(HTML.value(value))</td>"
            case .relationship(let relationship):
                if relationship.isToOne {
                    let link = value.referencedIdentifiers.first.map { ModelLink.anchor($0) } ?? HTML.value(.null)
                    cells += "<td data-property=\"\(name)\">\(link)</td>"
                } else {
                    cells += "<td class=\"num\" data-property=\"\(name)\">\(value.referencedIdentifiers.count)</td>"
                }
            }
        }
        return "<tr>\(cells)</tr>"
    }

    private func link(cursor: String?, exact: Bool = false) -> String {
        "/entities/\(HTML.component(entity.name))"
            + HTML.query([
                ("filter", filterText), ("sort", sortProperty), ("order", descending ? "desc" : nil), ("after", cursor),
                ("count", exact ? "exact" : nil),
            ])
    }

    private func explanation(query: StoreQuery, sorted: Bool) -> String {
        let access = store.accessPath(for: query)
        let plan =
            store.queryPlan(for: query).map { lines in
                "<dt>plan</dt><dd><pre id=\"plan\">" + HTML.escape(lines.joined(separator: "\n")) + "</pre></dd>"
            } ?? ""
        let paging =
            sorted
            ? "keyset on '\(query.sort[0].property)' (skips \(query.offset) tied model\(query.offset == 1 ? "" : "s"))"
            : "offset \(query.offset) in identifier order ('\(entity.name)' has no unique or indexed attribute)"
        return """
            <dl class="explain" id="explain"><dt>Explain</dt>
            <dt>store query</dt><dd>\(HTML.escape(query.description))</dd>
            <dt>access path</dt><dd>\(HTML.escape(access?.description ?? "not reported by the store"))</dd>
            \(plan)
            <dt>runs in</dt><dd>the store (\(HTML.escape(store.storeTypeName))): filter, sort and limit</dd>
            <dt>paging</dt><dd>\(HTML.escape(paging))</dd>
            <dt>store capabilities</dt><dd>\(HTML.escape(store.capabilities.description))</dd></dl>
            """
    }
}
