import Foundation
import ModelStoreAdapters
import ModelStoreMacros
import Testing

/// A hue that is a class and not `Codable`, as `UIColor` is: stored only through a transformer.
final class Hue {
    let degrees: UInt16
    init(_ degrees: UInt16) { self.degrees = degrees }
}

/// Stores a hue as two bytes.
final class HueTransformer: ValueTransformer {
    override func transformedValue(_ value: Any?) -> Any? {
        (value as? Hue).map { Data([UInt8($0.degrees >> 8), UInt8($0.degrees & 0xFF)]) }
    }

    override func reverseTransformedValue(_ value: Any?) -> Any? {
        guard let data = value as? Data, data.count == 2 else { return nil }
        let bytes = Array(data)
        return Hue(UInt16(bytes[0]) << 8 | UInt16(bytes[1]))
    }
}

/// A model written as in a SwiftData app, with transformed attributes. A property of a type ModelStore
/// cannot store needs an initial value in the declaration (the framework makes models before it loads
/// their values, and cannot make a placeholder of such a type).
@Model
final class Swatch {
    var name: String
    @Attribute(.transformable(by: HueTransformer.self)) var hue: Hue = Hue(0)
    @Attribute(.transformable(by: HueTransformer.self), .preserveValueOnDeletion) var accent: Hue?

    init(name: String, hue: Hue, accent: Hue? = nil) {
        self.name = name
        self.hue = hue
        self.accent = accent
    }
}

/// `@Attribute(.transformable(by:))` in a `@Model` class stores through the transformer, in every store.
struct TransformableTests {
    @Test func theTransformationAndTheOtherOptionsReachTheSchema() throws {
        let entity = try #require(Schema([Swatch.self]).entity(named: "Swatch"))
        #expect(entity.attribute(named: "hue")?.valueType == .data)
        #expect(entity.attribute(named: "accent")?.valueType == .optional(.data))
        #expect(entity.attribute(named: "accent")?.options == [.preserveValueOnDeletion])
        #expect(entity.attribute(named: "hue")?.transformation == .transformable(by: HueTransformer.self))
    }

    @Test(arguments: 0..<4)
    func transformedValuesRoundTrip(store: Int) throws {
        let directory = try TemporaryDirectory()
        try directory.writeThenReopen(
            store: store, schema: Schema([Swatch.self]),
            write: { container in
                let context = ModelContext(container)
                context.insert(Swatch(name: "sea", hue: Hue(200), accent: Hue(359)))
                context.insert(Swatch(name: "sun", hue: Hue(50)))
                try context.save()
            },
            read: { context in
                let swatches = try context.fetch(FetchDescriptor<Swatch>(sortBy: [SortDescriptor(\.name)]))
                #expect(swatches.map(\.name) == ["sea", "sun"])
                #expect(swatches.map(\.hue.degrees) == [200, 50])
                #expect(swatches.map { $0.accent?.degrees } == [359, nil])
            })
    }
}
