import Foundation
import ModelStore
import ModelStoreAdapters

/// The `predicate` target: a generated predicate (``FuzzPredicateShape``) is fetched from an in-memory
/// store (which translates it and runs what it pushes down on stored snapshots) and from a SQLite store
/// (which runs it as SQL). Each result must be exactly the models for which Swift's own
/// `Predicate.evaluate` holds, and `fetchCount`, `fetchIdentifiers` and `explain` must agree and not
/// crash. A disagreement stops the process with the predicate, so libFuzzer keeps the input. (Where a
/// predicate orders text that Swift's own `<` cannot order, see
/// ``FuzzPredicateShape/ordersIncomparableText(names:labels:)``, only the in-memory store is compared.)
enum PredicateFuzzing {
    /// An in-memory container (which orders text with Swift's `<`) and a SQLite one (in a fresh temporary
    /// folder, which orders text by NFC scalars) with the fixed data set, made once per process.
    static let containers: [ModelContainer] = {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
            "predicate-fuzz-\(UUID().uuidString)")
        let registry = StoreRegistry()
        registry.registerBuiltInSchemes()
        do {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            return try ["memory:predicate-fuzz", "sqlite:\(folder.path)/predicate.sqlite"].map { url in
                let container = try ModelContainer(
                    for: FuzzTarget.schema, configurations: [try registry.configuration(for: url)])
                try seed(ModelContext(container))
                return container
            }
        } catch {
            fatalError("predicate fuzz: cannot make the data set: \(error)")
        }
    }()

    /// Sixteen items with values from ``FuzzValues``' pools (chosen by a fixed linear congruential
    /// sequence), each with up to three parts.
    static func seed(_ context: ModelContext) throws {
        var state: UInt64 = 0x5EED
        func next(_ count: Int) -> Int {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Int(state >> 33) % count
        }
        func pick<T>(_ items: [T]) -> T { items[next(items.count)] }
        // Unique names, with case variants and both spellings of an accented letter.
        let names = [
            "", "a", "A", "ab", "Ab", "lamp", "Lamp", "LAMP", "\u{E9}", "e\u{301}a", "\u{E9}b", "\u{DF}",
            "ss",
            "\u{1F600}x", "a b", "zz",
        ]
        for name in names {
            let item = FuzzItem()
            item.name = name
            item.count = pick(FuzzValues.ints)
            item.small = pick(FuzzValues.smalls)
            item.big = pick(FuzzValues.bigs)
            item.ratio = pick(FuzzValues.doubles)
            item.price = pick(FuzzValues.decimals)
            item.when = pick(FuzzValues.dates)
            item.id = pick(FuzzValues.ids)
            item.link = pick(FuzzValues.links)
            item.tags = (0..<next(3)).map { _ in pick(FuzzValues.texts) }
            context.insert(item)
            for _ in 0..<next(4) {
                let part = FuzzPart()
                part.label = pick(FuzzValues.texts)
                context.insert(part)
                part.item = item
            }
        }
        try context.save()
    }

    static func run(_ bytes: [UInt8]) {
        var choices = FuzzChoices(bytes)
        let shape = FuzzPredicateShape.decode(&choices)
        let predicate = shape.predicate
        let descriptor = FetchDescriptor<FuzzItem>(predicate: predicate)
        for container in containers {
            check(
                shape, predicate, descriptor, in: ModelContext(container),
                ordersTextLikeSwift: container === containers.first)
        }
    }

    private static func check(
        _ shape: FuzzPredicateShape, _ predicate: Predicate<FuzzItem>,
        _ descriptor: FetchDescriptor<FuzzItem>,
        in context: ModelContext, ordersTextLikeSwift: Bool
    ) {
        let store = context.container.configurations.first.map { "\(type(of: $0))" } ?? "?"
        do {
            let everything = try context.fetch(FetchDescriptor<FuzzItem>())
            let expected = Set(try everything.filter { try predicate.evaluate($0) }.map(\.name))
            if !ordersTextLikeSwift,
                shape.ordersIncomparableText(
                    names: everything.map(\.name), labels: everything.flatMap { $0.parts.map(\.label) })
            {
                return  // Swift's order is not total there; SQLite's NFC order is documented to differ.
            }
            let fetched = try context.fetch(descriptor).map(\.name)
            let count = try context.fetchCount(descriptor)
            let identifiers = try context.fetchIdentifiers(descriptor)
            _ = try context.explain(descriptor).description
            guard Set(fetched) == expected, fetched.count == expected.count, count == expected.count,
                Set(identifiers).count == expected.count
            else {
                fatalError(
                    """
                    predicate fuzz: \(store) and Swift disagree on \(shape): Swift \(expected.sorted()), \
                    fetched \(fetched.sorted()), count \(count), identifiers \(identifiers.count)
                    """)
            }
        } catch {
            fatalError("predicate fuzz: \(shape) threw on \(store): \(error)")
        }
    }
}
