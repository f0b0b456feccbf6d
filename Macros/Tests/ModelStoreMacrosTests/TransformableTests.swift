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

/// A model written as in a SwiftData app, with transformed attributes of a type ModelStore cannot store
/// and no initial values.
@Model
final class Swatch {
    var name: String
    @Attribute(.transformable(by: HueTransformer.self)) var hue: Hue
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

    @Test func aKeyPathToATransformedPropertyWithoutInitialValueResolves() throws {
        let entity = try #require(Schema([Swatch.self]).entity(named: "Swatch"))
        #expect(entity.attribute(for: \Swatch.hue)?.name == "hue")
        #expect(entity.attribute(for: \Swatch.accent)?.name == "accent")
        #expect(entity.attribute(named: "hue")?.defaultValue == .data(Data()))
    }

    @Test func aTransformedPropertySetInAnObserverOrAfterInitIsStored() throws {
        let container = try ModelContainer(for: Swatch.self, url: "memory:")
        let context = ModelContext(container)
        let swatch = Swatch(name: "dusk", hue: Hue(10))
        context.insert(swatch)
        try context.save()
        swatch.hue = Hue(300)
        try context.save()
        let fetched = try ModelContext(container).fetch(FetchDescriptor<Swatch>())
        #expect(fetched.map(\.hue.degrees) == [300])
    }

    @Test func onlyTheAttributesAFetchAskedForAreLoadedAndTheTransformedOneFollowsOnFirstRead() throws {
        let directory = try TemporaryDirectory()
        let container = try ModelContainer(for: Swatch.self, url: "sqlite:\(directory.url.path)/swatches.sqlite")
        let context = ModelContext(container)
        context.insert(Swatch(name: "sea", hue: Hue(200)))
        try context.save()
        var descriptor = FetchDescriptor<Swatch>()
        descriptor.propertiesToFetch = [\.name]
        let fetched = try ModelContext(container).fetch(descriptor)
        #expect(fetched.map(\.name) == ["sea"])
        #expect(fetched.map(\.hue.degrees) == [200])
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

/// What a model the framework makes, before a fetch loads its values, holds in a transformed property
/// without an initial value.
struct TransformedPlaceholderTests {
    @Test func theFrameworksModelHasNoValueAndReadingItStopsTheProgramSayingWhy() async throws {
        let result = try await #require(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = Swatch().hue
        }
        let message = String(decoding: result.standardErrorContent, as: UTF8.self)
        #expect(message.contains("a model of 'Swatch' that the framework made before loading its values was read"))
        #expect(message.contains("a property of type 'Hue' of 'Swatch', which a value transformer stores"))
        #expect(message.contains("give the property an initial value in its declaration"))
    }

    @Test func aKeyPathThroughTheTransformedPropertyStopsTheProgramSayingWhatToNameInstead() async throws {
        let result = try await #require(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = Schema([Swatch.self]).entity(named: "Swatch")?.propertyName(for: \Swatch.hue.degrees)
        }
        let message = String(decoding: result.standardErrorContent, as: UTF8.self)
        #expect(message.contains("a key path on 'Swatch' reads through a property of type 'Hue'"))
        #expect(message.contains("name the property itself in sorts, predicates and constraints"))
    }

    @Test func savingAModelWhoseTransformedValueWasNeverSetThrowsNamingTheProperty() throws {
        let container = try ModelContainer(for: Swatch.self, url: "memory:")
        let context = ModelContext(container)
        let swatch = Swatch()
        swatch.name = "blank"
        context.insert(swatch)
        let error = try #require(throws: DataStoreError.self) { try context.save() }
        #expect(error.code == .invalidValue)
        #expect(error.message.contains("'Swatch.hue'"))
    }
}
