import Foundation
import ModelStoreAdapters
import ModelStoreMacros
import Testing

/// A library declared as SwiftData apps that sync through CloudKit declare relationships: every
/// to-many one an optional array.
@Model
final class Library {
    var name: String
    @Relationship(deleteRule: .cascade, inverse: \Book.library) var books: [Book]? = []
    var featured: [Book]?

    init(name: String) {
        self.name = name
    }
}

@Model
final class Book {
    var title: String
    var library: Library?

    init(title: String) {
        self.title = title
    }
}

/// `[Model]?` relationships under `@Model`: to-many in the schema, stored and read back as arrays.
struct OptionalToManyTests {
    @Test func theyAreToManyRelationshipsWithTheirInverse() throws {
        let schema = Schema([Library.self, Book.self])
        let library = try #require(schema.entity(named: "Library"))
        let books = try #require(library.relationship(named: "books"))
        #expect(!books.isToOne && books.destination == "Book" && books.inverseName == "library")
        #expect(books.deleteRule == .cascade)
        #expect(library.relationship(named: "featured")?.isToOne == false)
    }

    @Test(arguments: ["memory:", "sqlite::memory:"])
    func theyStoreAndReadBackAsArrays(url: String) throws {
        let container = try ModelContainer(for: Library.self, Book.self, url: url)
        let context = ModelContext(container)
        let library = Library(name: "City")
        let atlas = Book(title: "Atlas")
        context.insert(library)
        library.books = [atlas, Book(title: "Bestiary")]
        #expect(atlas.library === library, "the inverse is linked at once")
        try context.save()

        let fetched = try #require(try ModelContext(container).fetch(FetchDescriptor<Library>()).first)
        #expect(fetched.books?.map(\.title).sorted() == ["Atlas", "Bestiary"])
        #expect(fetched.featured?.isEmpty == true, "an unset optional to-many reads back empty, not nil")
    }
}
