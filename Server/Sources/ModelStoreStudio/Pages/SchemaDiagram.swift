import ModelStore

/// The schema as an entity-relationship diagram in SVG: a box per entity listing its attributes
/// with their types, and a line per relationship (drawn once for a relationship and its inverse),
/// labelled with its name and its cardinality at each end. An entity that stores a class hierarchy
/// gets a box per class listing the properties the class declares, with an "is a" arrow (a hollow
/// triangle) from each subclass to its superclass; the root class's box is the entity's.
struct SchemaDiagram {
    static let boxWidth = 230
    static let rowHeight = 18
    static let headerHeight = 26
    static let gapX = 110
    static let gapY = 60

    let schema: Schema

    /// What one box shows: an entity, or one class of an entity's hierarchy.
    struct Item {
        /// The key of the box: the entity's name for an entity or a root class, `class:NAME` for a subclass.
        var key: String
        var title: String
        var entity: Schema.Entity
        var attributes: [Schema.Attribute]
        /// The key of the superclass's box, for a subclass.
        var superclassKey: String?
        var isAbstract: Bool
        /// The class of a hierarchy the box shows, if it shows one.
        var className: String?

        var height: Int { SchemaDiagram.headerHeight + max(1, attributes.count) * SchemaDiagram.rowHeight + 8 }
    }

    /// A box's place and size.
    struct Box {
        var x: Int
        var y: Int
        var height: Int
        var centerX: Int { x + SchemaDiagram.boxWidth / 2 }
        var centerY: Int { y + height / 2 }
    }

    /// The boxes: an entity's, followed by its subclasses' (parents first) when it stores a hierarchy.
    static func items(of entities: [Schema.Entity]) -> [Item] {
        var items: [Item] = []
        for entity in entities {
            guard let hierarchy = ClassHierarchy(entity) else {
                items.append(
                    Item(
                        key: entity.name, title: entity.name, entity: entity, attributes: entity.attributes,
                        superclassKey: nil, isAbstract: false))
                continue
            }
            for modelClass in hierarchy.classes {
                let isRoot = modelClass.superclassName == nil
                items.append(
                    Item(
                        key: isRoot ? entity.name : "class:" + modelClass.name, title: modelClass.name, entity: entity,
                        attributes: entity.attributes.filter { modelClass.ownPropertyNames.contains($0.name) },
                        superclassKey: modelClass.superclassName.map { name in
                            hierarchy.modelClass(named: name)?.superclassName == nil ? entity.name : "class:" + name
                        },
                        isAbstract: modelClass.isAbstract, className: modelClass.name))
            }
        }
        return items
    }

    /// The key of the box that draws a relationship: its declaring class's in a hierarchy.
    private static func key(of relationship: Schema.Relationship, in entity: Schema.Entity) -> String {
        guard let hierarchy = ClassHierarchy(entity),
            let owner = hierarchy.classes.first(where: { $0.ownPropertyNames.contains(relationship.name) }),
            owner.superclassName != nil
        else { return entity.name }
        return "class:" + owner.name
    }

    func render() -> String {
        let entities = schema.entities.sorted { $0.name < $1.name }
        guard !entities.isEmpty else { return "<p class=\"muted\">The schema has no entities.</p>" }
        let items = Self.items(of: entities)
        let (boxes, width, height) = Self.layout(items)
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
                guard let from = boxes[Self.key(of: relationship, in: entity)], let to = boxes[relationship.destination]
                else { continue }
                lines += line(from: from, to: to, entity: entity, relationship: relationship)
            }
        }
        for item in items {
            guard let superclassKey = item.superclassKey, let from = boxes[item.key], let to = boxes[superclassKey]
            else { continue }
            let (x1, y1) = edgePoint(of: from, toward: to)
            let (x2, y2) = edgePoint(of: to, toward: from)
            lines += """
                <line class="is-a" data-from="\(HTML.escape(item.title))" x1="\(x1)" y1="\(y1)" x2="\(x2)" y2="\(y2)" \
                stroke="#1f2d3d" stroke-width="1.5" marker-end="url(#is-a)"/>
                <text x="\((x1 + x2) / 2 + 6)" y="\((y1 + y2) / 2)" fill="#1f2d3d">is a</text>
                """
        }
        var shapes = ""
        for item in items {
            guard let box = boxes[item.key] else { continue }
            let id = item.key == item.entity.name ? "entity-\(item.entity.name)" : "class-\(item.title)"
            let href =
                "/entities/\(HTML.component(item.entity.name))"
                + (item.className.map { HTML.query([("class", $0)]) } ?? "")
            let title =
                item.isAbstract
                ? "<tspan font-style=\"italic\">\(HTML.escape(item.title))</tspan> «abstract»" : HTML.escape(item.title)
            shapes += """
                <g class="entity" id="\(HTML.escape(id))">
                <a href="\(href)">
                <rect x="\(box.x)" y="\(box.y)" width="\(Self.boxWidth)" height="\(box.height)" rx="6" fill="#fff" stroke="#1f2d3d"/>
                <rect x="\(box.x)" y="\(box.y)" width="\(Self.boxWidth)" height="\(Self.headerHeight)" rx="6" fill="\(item.className == nil ? "#1f2d3d" : "#3b4d63")"/>
                <text x="\(box.centerX)" y="\(box.y + 17)" text-anchor="middle" fill="#fff" font-weight="600">\(title)</text></a>
                """
            for (index, attribute) in item.attributes.enumerated() {
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
            <path d="M0,0 L10,4 L0,8 z" fill="#1a5fb4"/></marker>
            <marker id="is-a" markerWidth="14" markerHeight="12" refX="13" refY="6" orient="auto">
            <path d="M1,1 L13,6 L1,11 z" fill="#fff" stroke="#1f2d3d"/></marker></defs>
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
