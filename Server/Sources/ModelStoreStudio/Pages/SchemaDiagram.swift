import ModelStore

/// The schema as an entity-relationship diagram in SVG: a box per entity listing its attributes
/// with their types, and a line per relationship (drawn once for a relationship and its inverse),
/// labelled with its name and its cardinality at each end.
struct SchemaDiagram {
    static let boxWidth = 230
    static let rowHeight = 18
    static let headerHeight = 26
    static let gapX = 110
    static let gapY = 60

    let schema: Schema

    /// A box's place and size.
    struct Box {
        var x: Int
        var y: Int
        var height: Int
        var centerX: Int { x + SchemaDiagram.boxWidth / 2 }
        var centerY: Int { y + height / 2 }
    }

    func render() -> String {
        let entities = schema.entities.sorted { $0.name < $1.name }
        guard !entities.isEmpty else { return "<p class=\"muted\">The schema has no entities.</p>" }
        var columns = 1
        while columns * columns < entities.count { columns += 1 }
        let rows = (entities.count + columns - 1) / columns
        var boxes: [String: Box] = [:]
        var rowTops = [Self.gapY / 2]
        for row in 0..<rows {
            let inRow = entities.dropFirst(row * columns).prefix(columns)
            let tallest = inRow.map { Self.headerHeight + max(1, $0.attributes.count) * Self.rowHeight + 8 }.max() ?? 0
            for (column, entity) in inRow.enumerated() {
                let height = Self.headerHeight + max(1, entity.attributes.count) * Self.rowHeight + 8
                boxes[entity.name] = Box(x: 20 + column * (Self.boxWidth + Self.gapX), y: rowTops[row], height: height)
            }
            rowTops.append(rowTops[row] + tallest + Self.gapY)
        }
        let width = 40 + columns * Self.boxWidth + (columns - 1) * Self.gapX
        let height = rowTops.last! - Self.gapY / 2
        var lines = ""
        var drawn: Set<String> = []
        for entity in entities {
            for relationship in entity.relationships {
                let key = [
                    entity.name + "." + relationship.name,
                    relationship.destination + "." + (relationship.inverseName ?? ""),
                ]
                .sorted().joined(separator: "|")
                if relationship.inverseName != nil && drawn.contains(key) { continue }
                drawn.insert(key)
                guard let from = boxes[entity.name], let to = boxes[relationship.destination] else { continue }
                lines += line(from: from, to: to, entity: entity, relationship: relationship)
            }
        }
        var shapes = ""
        for entity in entities {
            guard let box = boxes[entity.name] else { continue }
            shapes += """
                <g class="entity" id="entity-\(HTML.escape(entity.name))">
                <a href="/entities/\(HTML.component(entity.name))">
                <rect x="\(box.x)" y="\(box.y)" width="\(Self.boxWidth)" height="\(box.height)" rx="6" fill="#fff" stroke="#1f2d3d"/>
                <rect x="\(box.x)" y="\(box.y)" width="\(Self.boxWidth)" height="\(Self.headerHeight)" rx="6" fill="#1f2d3d"/>
                <text x="\(box.centerX)" y="\(box.y + 17)" text-anchor="middle" fill="#fff" font-weight="600">\(HTML.escape(entity.name))</text></a>
                """
            for (index, attribute) in entity.attributes.enumerated() {
                let y = box.y + Self.headerHeight + 15 + index * Self.rowHeight
                let marks =
                    (attribute.isUnique ? " ◆" : "") + (attribute.options.contains(.externalStorage) ? " ⇲" : "")
                shapes += """
                    <text x="\(box.x + 8)" y="\(y)">\(HTML.escape(attribute.name))\(marks)</text>
                    <text x="\(box.x + Self.boxWidth - 8)" y="\(y)" text-anchor="end" fill="#6b7580">\(HTML.escape(attribute.valueType.description))</text>
                    """
            }
            shapes += "</g>"
        }
        return """
            <svg xmlns="http://www.w3.org/2000/svg" id="schema-diagram" width="\(width)" height="\(height)" \
            viewBox="0 0 \(width) \(height)">
            <defs><marker id="arrow" markerWidth="10" markerHeight="8" refX="9" refY="4" orient="auto">
            <path d="M0,0 L10,4 L0,8 z" fill="#1a5fb4"/></marker></defs>
            \(lines)\(shapes)</svg>
            """
    }

    private func line(from: Box, to: Box, entity: Schema.Entity, relationship: Schema.Relationship) -> String {
        let many = relationship.isToOne ? "1" : "*"
        let inverse = relationship.inverseName.flatMap { name in
            schema.entities.first { $0.name == relationship.destination }?.relationship(named: name)
        }
        let back = inverse.map { $0.isToOne ? "1" : "*" } ?? ""
        let label = HTML.escape(relationship.name + (relationship.inverseName.map { " ⇄ " + $0 } ?? ""))
        if from.x == to.x && from.y == to.y {
            // A relationship to the same entity: a loop on the box's right side.
            let x = from.x + Self.boxWidth
            let y = from.y + 8
            return """
                <path d="M\(x),\(y) C\(x + 60),\(y - 30) \(x + 60),\(y + 50) \(x),\(y + 22)" fill="none" stroke="#1a5fb4" \
                marker-end="url(#arrow)"/>
                <text x="\(x + 48)" y="\(y + 12)" fill="#1a5fb4">\(label) \(many)</text>
                """
        }
        let (x1, y1) = edgePoint(of: from, toward: to)
        let (x2, y2) = edgePoint(of: to, toward: from)
        return """
            <line x1="\(x1)" y1="\(y1)" x2="\(x2)" y2="\(y2)" stroke="#1a5fb4" stroke-width="1.5" marker-end="url(#arrow)"/>
            <text x="\((x1 + x2) / 2)" y="\((y1 + y2) / 2 - 6)" text-anchor="middle" fill="#1a5fb4">\(label)</text>
            <text x="\(x2 + (x1 > x2 ? 10 : -14))" y="\(y2 + (y1 > y2 ? 16 : -6))" fill="#b3261e" font-weight="600">\(many)</text>
            <text x="\(x1 + (x2 > x1 ? 10 : -14))" y="\(y1 + (y2 > y1 ? 16 : -6))" fill="#b3261e" font-weight="600">\(back)</text>
            """
    }

    /// Where the line from a box's centre toward another box leaves the box's border.
    private func edgePoint(of box: Box, toward other: Box) -> (Int, Int) {
        let dx = Double(other.centerX - box.centerX)
        let dy = Double(other.centerY - box.centerY)
        let halfWidth = Double(Self.boxWidth) / 2
        let halfHeight = Double(box.height) / 2
        let scale = min(dx == 0 ? .infinity : halfWidth / abs(dx), dy == 0 ? .infinity : halfHeight / abs(dy))
        return (box.centerX + Int(dx * scale), box.centerY + Int(dy * scale))
    }
}
