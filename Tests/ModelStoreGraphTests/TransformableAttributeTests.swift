import Foundation
import ModelStore
import Testing

/// A colour that is a class and not `Codable`: ModelStore stores it only through a transformer.
final class Paint: Equatable, CustomStringConvertible {
    let red: UInt8
    let green: UInt8
    let blue: UInt8

    init(_ red: UInt8, _ green: UInt8, _ blue: UInt8) {
        (self.red, self.green, self.blue) = (red, green, blue)
    }

    static func == (a: Paint, b: Paint) -> Bool { (a.red, a.green, a.blue) == (b.red, b.green, b.blue) }
    var description: String { "Paint(\(red), \(green), \(blue))" }
}

/// Stores a paint as its three bytes.
final class PaintTransformer: ValueTransformer {
    override func transformedValue(_ value: Any?) -> Any? {
        guard let paint = value as? Paint else { return nil }
        return Data([paint.red, paint.green, paint.blue])
    }

    override func reverseTransformedValue(_ value: Any?) -> Any? {
        guard let data = value as? Data, data.count == 3 else { return nil }
        return Paint(data[data.startIndex], data[data.startIndex + 1], data[data.startIndex + 2])
    }
}

/// Stores a string as its UTF-8 bytes in capitals, so what comes back shows the transformer ran.
final class ShoutingTransformer: ValueTransformer {
    static let name = "ShoutingTransformer"
    override func transformedValue(_ value: Any?) -> Any? { (value as? String).map { Data($0.uppercased().utf8) } }
    override func reverseTransformedValue(_ value: Any?) -> Any? {
        (value as? Data).map { String(decoding: $0, as: UTF8.self) }
    }
}

/// A transformer that breaks its contract: it turns values into a string, not `Data`.
final class TextTransformer: ValueTransformer {
    override func transformedValue(_ value: Any?) -> Any? { "\(value ?? "")" }
}

/// A canvas with a transformed attribute of each form: by class, by registered name, optional.
final class Canvas: PersistentModel {
    @Attribute var title: String = ""
    @Attribute(.transformable(by: PaintTransformer.self)) var background: Paint = Paint(0, 0, 0)
    @Attribute(.transformable(by: PaintTransformer.self)) var border: Paint?
    @Attribute(.transformable(by: ShoutingTransformer.name)) var caption: String = ""

    let persistentBackingData = BackingData()
    init() {}
}

/// A model whose transformer does not give `Data`.
final class Sketch: PersistentModel {
    @Attribute(.transformable(by: TextTransformer.self)) var ink: Paint? = nil

    let persistentBackingData = BackingData()
    init() {}
}

/// A model whose transformer's name nobody registered.
final class Mural: PersistentModel {
    @Attribute(.transformable(by: "NobodyRegisteredThis")) var wall: Paint? = nil

    let persistentBackingData = BackingData()
    init() {}
}

/// `@Attribute(.transformable(by:))`, SwiftData's spelling: values go through the transformer, in
/// every built-in store.
@Suite struct TransformableAttributeTests {
    init() {
        ValueTransformer.setValueTransformer(
            ShoutingTransformer(), forName: NSValueTransformerName(ShoutingTransformer.name))
    }

    @Test func theSchemaStoresTransformedValuesAsData() throws {
        let entity = try #require(Schema([Canvas.self]).entity(for: Canvas.self))
        #expect(entity.attribute(named: "background")?.valueType == .data)
        #expect(entity.attribute(named: "border")?.valueType == .optional(.data))
        #expect(entity.attribute(named: "caption")?.valueType == .data)
    }

    @Test(arguments: StoreKind.allCases)
    func transformedValuesRoundTrip(_ kind: StoreKind) throws {
        let store = try StoreUnderTest(kind, types: [Canvas.self])
        let context = ModelContext(store.container)
        let dusk = Canvas()
        dusk.title = "dusk"
        dusk.background = Paint(10, 20, 30)
        dusk.border = Paint(255, 0, 128)
        dusk.caption = "quiet evening"
        let blank = Canvas()
        blank.title = "blank"
        context.insert(dusk)
        context.insert(blank)
        try context.save()

        let again = ModelContext(try store.reopen())
        let canvases = try again.fetch(FetchDescriptor<Canvas>(sortBy: [SortDescriptor(\.title)]))
        #expect(canvases.map(\.title) == ["blank", "dusk"])
        #expect(canvases.map(\.background) == [Paint(0, 0, 0), Paint(10, 20, 30)])
        #expect(canvases.map(\.border) == [nil, Paint(255, 0, 128)])
        // The caption went through the registered transformer, which keeps it in capitals.
        #expect(canvases.map(\.caption) == ["", "QUIET EVENING"])

        // An edit is stored through the transformer too.
        canvases[1].border = nil
        canvases[0].background = Paint(1, 2, 3)
        try again.save()
        let third = ModelContext(try store.reopen())
        let edited = try third.fetch(FetchDescriptor<Canvas>(sortBy: [SortDescriptor(\.title)]))
        #expect(edited.map(\.border) == [nil, nil])
        #expect(edited.map(\.background) == [Paint(1, 2, 3), Paint(10, 20, 30)])
        // A predicate on a transformed value runs on the models.
        let dark = try third.fetch(FetchDescriptor<Canvas>(predicate: #Predicate { $0.caption == "QUIET EVENING" }))
        #expect(dark.map(\.title) == ["dusk"])
    }

    @Test func aTransformerThatDoesNotGiveDataFailsTheSaveAndSaysSo() throws {
        let store = try StoreUnderTest(.sqlite, types: [Sketch.self])
        let context = ModelContext(store.container)
        let sketch = Sketch()
        sketch.ink = Paint(1, 1, 1)
        context.insert(sketch)
        let error = try #require(throws: DataStoreError.self) { try context.save() }
        #expect(error.code == .invalidValue)
        #expect("\(error)".contains("TextTransformer did not turn a 'Optional<Paint>' into Data"))
        #expect(try ModelContext(try store.reopen()).fetchCount(FetchDescriptor<Sketch>()) == 0)
    }

    @Test func anUnregisteredTransformerNameFailsTheSchemaAndNamesIt() throws {
        let error = try #require(throws: DataStoreError.self) { try Schema([Mural.self]).validate() }
        #expect(
            "\(error)".contains(
                "'Mural.wall' is stored through the value transformer registered as 'NobodyRegisteredThis'"))
        #expect("\(error)".contains("ValueTransformer.setValueTransformer"))
    }
}
