import Foundation
import ModelStore
import ModelStoreAdapters
import ModelStoreTestSupport
import Testing

/// A place whose name is searched as `localizedStandardContains` would: its folded copy is kept in
/// step by `didSet`, the pattern `foldedForSearch` documents.
final class Place: PersistentModel {
    @Attribute var name: String = "" {
        didSet { nameKey = name.foldedForSearch }
    }
    @Attribute var nameKey: String = ""

    let persistentBackingData = BackingData()
    init() {}
    convenience init(_ name: String) {
        self.init()
        self.name = name
    }
}

/// The Linux replacement for `localizedStandardContains`: the same matches in every store, run
/// in the store.
struct SearchFoldingTests {
    @Test func foldingIgnoresCaseDiacriticsAndWidth() {
        #expect("Musée d'ORSAY".foldedForSearch == "musee d'orsay")
        #expect("ＡＢＣ".foldedForSearch == "abc")
        #expect("Straße".foldedForSearch == "strasse")
        #expect("e\u{301}cole".foldedForSearch == "École".foldedForSearch)  // decomposed and precomposed
    }

    @Test(arguments: ["memory:", "json:places.json", "sqlite:places.sqlite", "log:places"])
    func aFoldedSearchFindsWhatLocalizedStandardContainsFinds(url: String) throws {
        let directory = try TemporaryDirectory()
        let location =
            url.hasPrefix("memory:") ? url : url.replacingOccurrences(of: ":", with: ":" + directory.url.path + "/")
        let container = try ModelContainer(for: Place.self, url: location)
        let context = ModelContext(container)
        for name in ["Musée d'Orsay", "MUSEUM of Art", "Muse", "Le Musee Rodin", "Mus\u{E9}e", "Mu\u{301}see"] {
            context.insert(Place(name))
        }
        try context.save()
        let query = "musee"
        let key = query.foldedForSearch
        let descriptor = FetchDescriptor<Place>(predicate: #Predicate { $0.nameKey.contains(key) })
        let found = try ModelContext(container).fetch(descriptor).map(\.name)
        // Both spellings of "Musée" (precomposed and decomposed) are found; "MUSEUM" and "Muse" are not.
        #expect(found.sorted() == ["Le Musee Rodin", "Mu\u{301}see", "Musée d'Orsay", "Mus\u{E9}e"].sorted(), "\(url)")
        // The condition runs in the store, not on models.
        let plan = try context.explain(descriptor)
        #expect(!plan.evaluatesPredicateOnModels && plan.snapshotFilter == nil, "\(url): \(plan)")
        // A changed name is searched by its new folding.
        let museum = try #require(
            try context.fetch(FetchDescriptor<Place>(predicate: #Predicate { $0.name == "Muse" })).first)
        museum.name = "Musée Grévin"
        try context.save()
        #expect(try ModelContext(container).fetch(descriptor).map(\.name).contains("Musée Grévin"))
    }
}
