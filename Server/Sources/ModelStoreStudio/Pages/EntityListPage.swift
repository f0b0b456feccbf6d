import ModelStore

/// The first page: every entity with its number of models, found so that no count reads a whole
/// large table unless asked to: the estimates of the store's adapter where it keeps statistics
/// (PostgreSQL's), otherwise a count bounded at ``countBound``; either offers an exact count.
struct EntityListPage {
    /// Counts up to this many models are exact; past it the page says "more than" and offers an exact count.
    static let countBound = 10_000

    let store: StudioStore
    /// The entity whose exact count was asked for, if any.
    let exactCountOf: String?

    func render() throws -> String {
        var rows = ""
        let estimates = try store.estimatedCounts()
        for entity in store.entities {
            let countCell: String
            let exactLink =
                "<a class=\"muted\" href=\"/" + HTML.query([("exact", entity.name)]) + "\">count exactly</a>"
            if exactCountOf == entity.name {
                let count = try store.count(StoreQuery(entityName: entity.name))
                countCell = "\(count.formatted()) <span class=\"muted\">exact</span>"
            } else if let estimate = estimates?[entity.name] {
                countCell =
                    estimate.isEstimate
                    ? "about \(estimate.modelCount.formatted()) <span class=\"muted\">estimated</span> \(exactLink)"
                    : estimate.modelCount.formatted()
            } else {
                let seen = try store.identifiers(StoreQuery(entityName: entity.name, limit: Self.countBound + 1)).count
                if seen > Self.countBound {
                    countCell = "more than \(Self.countBound.formatted()) \(exactLink)"
                } else {
                    countCell = seen.formatted()
                }
            }
            let relationships = entity.relationships.map { relationship in
                "\(HTML.escape(relationship.name)) → \(HTML.escape(relationship.destination))"
                    + (relationship.isToOne ? "" : " (many)")
            }
            rows += """
                <tr><td><a href="/entities/\(HTML.component(entity.name))">\(HTML.escape(entity.name))</a>\(classes(of: entity))</td>
                <td class="num" data-count="\(HTML.escape(entity.name))">\(countCell)</td>
                <td>\(entity.attributes.map { HTML.escape($0.name) }.joined(separator: ", "))</td>
                <td>\(relationships.joined(separator: ", "))</td></tr>
                """
        }
        return """
            <h1>Entities</h1>
            <p class="muted">Store '\(HTML.escape(store.storeIdentifier))' (\(HTML.escape(store.storeTypeName))),
            schema version \(HTML.escape(store.schema.version.description)).</p>
            <table id="entities"><tr><th>Entity</th><th>Models</th><th>Attributes</th><th>Relationships</th></tr>
            \(rows)</table>
            """
    }

    /// The classes of an entity that stores a class hierarchy, under its name; nothing for another entity.
    private func classes(of entity: Schema.Entity) -> String {
        guard let hierarchy = ClassHierarchy(entity) else { return "" }
        let tree = hierarchy.tree(current: nil) {
            "/entities/\(HTML.component(entity.name))" + HTML.query([("class", $0)])
        }
        return "<div class=\"classes muted\" data-classes=\"\(HTML.escape(entity.name))\">classes: \(tree)</div>"
    }
}
