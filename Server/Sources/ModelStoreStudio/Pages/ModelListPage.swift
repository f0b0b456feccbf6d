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
    /// The class whose models (with its subclasses') are listed, in an entity that stores a class
    /// hierarchy; `nil` for all of them.
    var className: String? = nil

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
        let hierarchy = ClassHierarchy(entity)
        var classFilter: StoreFilter?
        if let className {
            guard let hierarchy else {
                throw StudioError(
                    .badRequest, "'\(entity.name)' stores models of one class, so it has no class '\(className)'",
                    remedy: "Leave out 'class' to list its models")
            }
            classFilter = try hierarchy.filter(forClass: className)
        }
        var notice = ""
        var filter: StoreFilter?
        do {
            filter = try FilterParser(schema: store.schema).parse(filterText, entity: entity)
        } catch {
            notice = "<div class=\"error\" id=\"filter-error\">\(HTML.escape(error.description))</div>"
        }
        if let classFilter {
            filter = filter.map { .and([classFilter, $0]) } ?? classFilter
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
            \(className.map { "<input type=\"hidden\" name=\"class\" value=\"\(HTML.escape($0))\">" } ?? "")
            <button type="submit">Filter</button></form>
            \(hierarchy.map(classList) ?? "")
            \(notice)
            <div class="layout"><div>
            <table id="models"><tr><th>id</th>\(headers(sortName: sortName))</tr>
            \(rows)</table>
            <div class="pager">\(first) \(nextLink) <span class="muted">\(countLine)</span></div>
            </div>\(explain)</div>
            """
    }

    /// The entity's classes, each a link to its models with its subclasses'.
    private func classList(_ hierarchy: ClassHierarchy) -> String {
        let all =
            "<a\(className == nil ? " class=\"current\"" : "") data-class=\"\" href=\"\(link(cursor: nil, className: .some(nil)))\">all classes</a>"
        let tree = hierarchy.tree(current: className) { link(cursor: nil, className: $0) }
        return "<nav class=\"classes\" id=\"classes\">Classes: \(all)\(tree)</nav>"
    }

    /// The columns: every property, or those the listed class has; the class attribute first.
    private var shownProperties: [Schema.Property] {
        guard let hierarchy = ClassHierarchy(entity) else { return entity.properties }
        let classAttribute = entity.properties.filter { $0.name == hierarchy.classAttribute.name }
        let others = entity.properties.filter { property in
            property.name != hierarchy.classAttribute.name
                && className.map { hierarchy.has(property, inClass: $0) } ?? true
        }
        return classAttribute + others
    }

    private func headers(sortName: String?) -> String {
        var cells = ""
        for property in shownProperties {
            switch property {
            case .attribute(let attribute) where Self.isSortable(attribute):
                let isCurrent = attribute.name == sortName
                let order = isCurrent && !descending ? "desc" : nil
                let arrow = isCurrent ? (descending ? " ▼" : " ▲") : ""
                let href =
                    "/entities/\(HTML.component(entity.name))"
                    + HTML.query([
                        ("filter", filterText), ("class", className), ("sort", attribute.name), ("order", order),
                    ])
                // The class attribute is headed by what it records, with its stored name as a tooltip.
                let label =
                    attribute.name == Schema.Entity.classAttributeName
                    ? "<span title=\"\(HTML.escape(attribute.name))\">class</span>" : HTML.escape(attribute.name)
                cells += "<th><a href=\"\(href)\">\(label)\(arrow)</a></th>"
            default:
                cells += "<th>\(HTML.escape(property.name))</th>"
            }
        }
        return cells
    }

    private func row(_ snapshot: DefaultSnapshot) -> String {
        var cells = "<td>\(ModelLink.anchor(snapshot.persistentIdentifier, showsEntity: false))</td>"
        for property in shownProperties {
            let value = snapshot.values[property.slot]
            let name = HTML.escape(property.name)
            switch property {
            case .attribute where property.name == Schema.Entity.classAttributeName:
                // A model's class links to the models of that class.
                let shown =
                    if case .string(let className) = value {
                        "<a href=\"\(link(cursor: nil, className: className))\">\(HTML.escape(className))</a>"
                    } else {
                        HTML.value(value)
                    }
                cells += "<td data-property=\"\(name)\">\(shown)</td>"
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

    /// This page's address with another cursor (and another class when `className` is given).
    private func link(cursor: String?, exact: Bool = false, className: String?? = .none) -> String {
        "/entities/\(HTML.component(entity.name))"
            + HTML.query([
                ("filter", filterText), ("class", className ?? self.className), ("sort", sortProperty),
                ("order", descending ? "desc" : nil), ("after", cursor), ("count", exact ? "exact" : nil),
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
