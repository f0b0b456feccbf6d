import ModelStore

extension SchemaDiagram {
    /// One entity's boxes placed together: a single box, or a hierarchy's classes as a tree with the
    /// root on top and each class centred over its subclasses.
    struct Block {
        /// Each box with its column (in box widths from the block's left edge) and its level (0 on top).
        var places: [(item: Item, column: Double, level: Int)]
        /// How many box widths the block takes.
        var columns: Int
        /// How many levels the block has.
        var levels: Int
    }

    /// The blocks of `items`, in which an entity's boxes follow one another (as ``items(of:)`` gives them).
    static func blocks(of items: [Item]) -> [Block] {
        var blocks: [Block] = []
        var index = 0
        while index < items.count {
            let entityName = items[index].entity.name
            var group: [Item] = []
            while index < items.count && items[index].entity.name == entityName {
                group.append(items[index])
                index += 1
            }
            blocks.append(tree(group))
        }
        return blocks
    }

    /// One entity's boxes as a tree: leaves side by side, each parent over the middle of its children.
    private static func tree(_ group: [Item]) -> Block {
        var places: [(item: Item, column: Double, level: Int)] = []
        var nextLeaf = 0.0
        func place(_ item: Item, level: Int) -> Double {
            let children = group.filter { $0.superclassKey == item.key }
            let column: Double
            if children.isEmpty {
                column = nextLeaf
                nextLeaf += 1
            } else {
                let columns = children.map { place($0, level: level + 1) }
                column = (columns[0] + columns[columns.count - 1]) / 2
            }
            places.append((item, column, level))
            return column
        }
        for root in group where root.superclassKey == nil { _ = place(root, level: 0) }
        return Block(places: places, columns: max(1, Int(nextLeaf)), levels: (places.map(\.level).max() ?? 0) + 1)
    }

    /// Where each box goes, by key, with the diagram's width and height: blocks left to right in rows
    /// about as many boxes wide as there are rows, each level of a row's trees at one height.
    static func layout(_ items: [Item]) -> (boxes: [String: Box], width: Int, height: Int) {
        let blocks = blocks(of: items)
        var target = 1
        while target * target < items.count { target += 1 }
        target = max(target, blocks.map(\.columns).max() ?? 1)
        var rows: [[Block]] = [[]]
        var used = 0
        for block in blocks {
            if used + block.columns > target && !rows[rows.count - 1].isEmpty {
                rows.append([])
                used = 0
            }
            rows[rows.count - 1].append(block)
            used += block.columns
        }
        var boxes: [String: Box] = [:]
        var top = gapY / 2
        var widest = 1
        let step = Double(boxWidth + gapX)
        for row in rows {
            var levelTops: [Int] = []
            for level in 0..<(row.map(\.levels).max() ?? 1) {
                levelTops.append(top)
                let heights = row.flatMap { block in block.places.filter { $0.level == level }.map(\.item.height) }
                top += (heights.max() ?? 0) + gapY
            }
            var left = 0
            for block in row {
                for place in block.places {
                    boxes[place.item.key] = Box(
                        x: 20 + Int((Double(left) + place.column) * step), y: levelTops[place.level],
                        height: place.item.height)
                }
                left += block.columns
            }
            widest = max(widest, left)
        }
        return (boxes, 40 + widest * boxWidth + (widest - 1) * gapX, top - gapY / 2)
    }
}
