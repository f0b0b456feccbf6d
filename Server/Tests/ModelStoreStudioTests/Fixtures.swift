import Foundation
import ModelStore
import ModelStoreAdapters

/// An author of books, with a unique name and an indexed birth year.
final class Author: PersistentModel {
    @Attribute(.unique) var name: String = ""
    @Attribute var born: Int = 0
    @Attribute var nickname: String? = nil
    @Attribute var active: Bool = false
    @Relationship(deleteRule: .cascade, inverse: \Book.author) var books: [Book] = []

    let persistentBackingData = BackingData()
    init() {}

    static var constraints: [ModelConstraint<Author>] { [.index(\.born)] }
}

/// A book with a title, a page count and its author.
final class Book: PersistentModel {
    @Attribute var title: String = ""
    @Attribute var pages: Int = 0
    @Relationship var author: Author?

    let persistentBackingData = BackingData()
    init() {}
}

/// A store in its own temporary folder, written through the app's model types and browsed without them.
struct LibraryFixture {
    /// The folder, removed by ``remove()``.
    let folder: URL
    /// The store's URL.
    let url: String

    /// An SQLite store with `authors` authors (born 1900 + i % 50, every third active) and two books each
    /// for the first five.
    init(authors: Int = 30) throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("studio-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        url = "sqlite:" + folder.appendingPathComponent("library.sqlite").path
        let container = try ModelContainer(for: Author.self, Book.self, url: url)
        let context = ModelContext(container)
        context.author = "fixture"
        for index in 0..<authors {
            let author = Author()
            author.name = String(format: "author %03d", index)
            author.born = 1900 + index % 50
            author.nickname = index % 4 == 0 ? nil : "nick\(index)"
            author.active = index % 3 == 0
            context.insert(author)
            if index < 5 {
                for number in 0..<2 {
                    let book = Book()
                    book.title = "Book \(index)-\(number)"
                    book.pages = 100 + index * 10 + number
                    context.insert(book)
                    book.author = author
                }
            }
        }
        try context.save()
    }

    /// Changes an author's birth year through the app's model types, as another writer would.
    func setBorn(_ name: String, _ year: Int) throws {
        let container = try ModelContainer(for: Author.self, Book.self, url: url)
        let context = ModelContext(container)
        context.author = "other"
        let authors = try context.fetch(FetchDescriptor<Author>(predicate: #Predicate { $0.name == name }))
        authors.first?.born = year
        try context.save()
    }

    /// An author's birth year as the app reads it.
    func born(_ name: String) throws -> Int? {
        let container = try ModelContainer(for: Author.self, Book.self, url: url)
        return try ModelContext(container).fetch(FetchDescriptor<Author>(predicate: #Predicate { $0.name == name }))
            .first?.born
    }

    /// Removes the folder.
    func remove() {
        try? FileManager.default.removeItem(at: folder)
    }
}
