import Foundation
import ModelStoreAdapters
import ModelStoreMacros
import Testing

/// A value type declared outside any model, as SwiftData apps declare shared enums and structs.
enum Mood: String, Codable, CaseIterable {
    case calm, busy
}

/// A struct declared outside any model.
struct Waypoint: Codable, Hashable {
    var name: String
    var minutes: Int
}

/// A model that is also `Codable` (apps make models `Codable` to export them): an unmarked optional
/// or array of it is still a relationship.
@Model
final class Guide: Codable {
    var name: String
    @Relationship(inverse: \Outing.guide) var led: [Outing] = []

    init(name: String) {
        self.name = name
    }

    enum CodingKeys: String, CodingKey { case name }

    required init(from decoder: any Decoder) throws {
        name = try decoder.container(keyedBy: CodingKeys.self).decode(String.self, forKey: .name)
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(name, forKey: .name)
    }
}

/// Top-level enums and structs as `T`, `T?` and `[T]`, none marked, beside relationships that are
/// spelled the same way.
@Model
final class Outing {
    var title: String
    var mood: Mood
    var lastMood: Mood?
    var moods: [Mood] = []
    var start: Waypoint?
    var stops: [Waypoint]
    var skipped: [Waypoint]? = nil
    var guide: Guide?
    var guides: [Guide] = []

    init(title: String, mood: Mood, stops: [Waypoint], guide: Guide?) {
        self.title = title
        self.mood = mood
        self.stops = stops
        self.guide = guide
    }
}

/// Unmarked properties of top-level value types are stored as values, as SwiftData stores them.
struct TopLevelValueTests {
    @Test func theSchemaHasTheValuesAsAttributesAndTheModelsAsRelationships() throws {
        let entity = try #require(Schema([Outing.self, Guide.self]).entity(named: "Outing"))
        #expect(
            entity.attributes.map(\.name).sorted() == [
                "lastMood", "mood", "moods", "skipped", "start", "stops", "title",
            ])
        #expect(entity.relationships.map(\.name).sorted() == ["guide", "guides"])
    }

    @Test(arguments: 0..<4)
    func valuesRoundTripOnEveryStore(store: Int) throws {
        let directory = try TemporaryDirectory()
        let stops = [Waypoint(name: "Harbour", minutes: 20), Waypoint(name: "Fort", minutes: 45)]
        try directory.writeThenReopen(
            store: store, schema: Schema([Outing.self, Guide.self]),
            write: { container in
                let context = ModelContext(container)
                let guide = Guide(name: "Ada")
                let outing = Outing(title: "Coast", mood: .busy, stops: stops, guide: guide)
                outing.lastMood = .calm
                outing.moods = [.calm, .busy, .calm]
                outing.start = Waypoint(name: "Station", minutes: 0)
                outing.guides = [guide]
                context.insert(outing)
                let empty = Outing(title: "Empty", mood: .calm, stops: [], guide: nil)
                empty.skipped = []
                context.insert(empty)
                try context.save()
            },
            read: { context in
                let outings = try context.fetch(FetchDescriptor<Outing>(sortBy: [SortDescriptor(\.title)]))
                try #require(outings.count == 2)
                let coast = outings[0]
                #expect(coast.mood == .busy)
                #expect(coast.lastMood == .calm)
                #expect(coast.moods == [.calm, .busy, .calm])
                #expect(coast.start == Waypoint(name: "Station", minutes: 0))
                #expect(coast.stops == stops)
                #expect(coast.skipped == nil)
                #expect(coast.guide?.name == "Ada")
                #expect(coast.guides.map(\.name) == ["Ada"])
                let empty = outings[1]
                #expect(empty.lastMood == nil)
                #expect(empty.start == nil)
                #expect(empty.stops == [])
                #expect(empty.skipped == [])
                #expect(empty.guide == nil)
            })
    }

    @Test func aRelationshipSetInAnInitializerIsLinkedToItsInverseWhenTheModelIsFirstUsed() throws {
        let container = try ModelContainer(for: Outing.self, Guide.self, url: "memory:")
        let context = ModelContext(container)
        let guide = Guide(name: "Ada")
        let outing = Outing(title: "Coast", mood: .calm, stops: [], guide: guide)
        context.insert(outing)
        #expect(guide.led.map(\.title) == ["Coast"])
        try context.save()
        let fetched = try ModelContext(container).fetch(FetchDescriptor<Guide>())
        #expect(fetched.map { $0.led.map(\.title) } == [["Coast"]])
    }
}
