import Foundation
import ModelStoreAdapters
import ModelStoreMacros
import Testing

/// A model in the spellings SwiftData apps use that the Trips models do not: types declared inside
/// the class, collections created with `[T]()`, several `#Unique` key path arrays, static, computed
/// and `private(set)` properties, and `@Attribute(.spotlight)`.
@Model
final class Recipe {
    #Unique<Recipe>([\.title, \.edition], [\.code])

    enum Course: String, Codable, CaseIterable { case starter, main, dessert }
    struct Step: Codable, Hashable {
        var text: String
        var minutes: Int
    }

    static let defaultTitle = "Untitled"
    @Attribute(.spotlight, .preserveValueOnDeletion) var title: String
    var edition = 1
    var code: String
    var course: Course?
    var steps: [Step] = []
    var tags = [String]()
    var ratings = [String: Int]()
    @Relationship(deleteRule: .cascade, inverse: \Ingredient.recipe) var ingredients = [Ingredient]()
    private(set) var revisions: Int = 0
    @Transient var drafts: [String: String] = [:]
    var totalMinutes: Int { steps.reduce(0) { $0 + $1.minutes } }
    var headline: String {
        get { title.uppercased() }
        set { title = newValue.capitalized }
    }

    init(title: String = Recipe.defaultTitle, code: String) {
        self.title = title
        self.code = code
    }

    func revise() { revisions += 1 }
}

@Model
final class Ingredient {
    var name: String
    var recipe: Recipe?

    init(_ name: String) {
        self.name = name
    }
}

/// A model declared inside a namespace, as a `VersionedSchema` declares its models.
enum CookbookV2 {
    @Model
    final class Chapter {
        #Unique<Chapter>([\.title])
        var title: String
        @Relationship var recipes: [Recipe] = []

        init(title: String) {
            self.title = title
        }
    }
}

/// SwiftData spellings that used to fail under `@Model`, stored and read back.
struct SpellingTests {
    @Test func theSchemaHasEveryStoredPropertyAndConstraint() throws {
        let entity = try #require(Schema([Recipe.self, Ingredient.self]).entity(named: "Recipe"))
        #expect(
            entity.attributes.map(\.name).sorted() == [
                "code", "course", "edition", "ratings", "revisions", "steps", "tags", "title",
            ])
        #expect(entity.relationship(named: "ingredients")?.inverseName == "recipe")
        #expect(entity.attribute(named: "title")?.options == [.preserveValueOnDeletion], "'.spotlight' has no effect")
        #expect(entity.uniquenessConstraints == [["title", "edition"], ["code"]])
    }

    @Test(arguments: 0..<4)
    func theyStoreAndReadBack(store: Int) throws {
        try TemporaryDirectory().writeThenReopen(store: store, schema: Schema([Recipe.self, Ingredient.self])) {
            container in
            let context = ModelContext(container)
            let recipe = Recipe(title: "soup", code: "S1")
            recipe.course = .starter
            recipe.steps = [Recipe.Step(text: "Chop", minutes: 5), Recipe.Step(text: "Boil", minutes: 20)]
            recipe.tags = ["warm"]
            recipe.ratings = ["ann": 5]
            recipe.headline = "LEEK SOUP"
            recipe.revise()
            recipe.drafts["v2"] = "more salt"
            context.insert(recipe)
            recipe.ingredients = [Ingredient("Leek"), Ingredient("Potato")]
            context.insert(Recipe(code: "S2"))
            try context.save()
        } read: { context in
            let recipes = try context.fetch(
                FetchDescriptor<Recipe>(predicate: #Predicate { $0.edition == 1 }, sortBy: [SortDescriptor(\.code)]))
            #expect(recipes.map(\.title) == ["Leek Soup", "Untitled"])
            let soup = try #require(recipes.first)
            #expect(soup.course == .starter && soup.totalMinutes == 25 && soup.steps.map(\.text) == ["Chop", "Boil"])
            #expect(soup.tags == ["warm"] && soup.ratings == ["ann": 5] && soup.revisions == 1)
            #expect(soup.drafts.isEmpty, "a transient property is not stored")
            #expect(soup.ingredients.map(\.name).sorted() == ["Leek", "Potato"])
            #expect(recipes.last?.course == nil && recipes.last?.steps == [])
        }
    }

    @Test func aModelInsideANamespaceIsStored() throws {
        let container = try ModelContainer(for: CookbookV2.Chapter.self, Recipe.self, Ingredient.self, url: "memory:")
        let context = ModelContext(container)
        let chapter = CookbookV2.Chapter(title: "Soups")
        context.insert(chapter)
        chapter.recipes = [Recipe(title: "Leek soup", code: "S1")]
        try context.save()
        let chapters = try ModelContext(container).fetch(FetchDescriptor<CookbookV2.Chapter>())
        #expect(chapters.map(\.title) == ["Soups"] && chapters.first?.recipes.map(\.code) == ["S1"])
        #expect(Schema([CookbookV2.Chapter.self]).entity(named: "Chapter")?.uniquenessConstraints == [["title"]])
    }
}
