import Foundation
import ModelStore

/// A shelf of books: a unique label; deleting a shelf deletes its books.
final class Shelf: PersistentModel {
    @Attribute(.unique) var label: String = ""
    @Relationship(deleteRule: .cascade, inverse: \Book.shelf) var books: [Book] = []

    let persistentBackingData = BackingData()
    init() {}

    convenience init(_ label: String, books: [Book] = []) {
        self.init()
        self.label = label
        self.books = books
    }
}

/// A book on a shelf, by an author.
final class Book: PersistentModel {
    @Attribute var title: String = ""
    @Attribute var pages: Int = 0
    @Attribute var published: Date = Date(timeIntervalSince1970: 0)
    @Relationship var shelf: Shelf?
    @Relationship(deleteRule: .nullify, inverse: \Author.books) var author: Author?

    let persistentBackingData = BackingData()
    init() {}

    convenience init(_ title: String, pages: Int, year: Int, author: Author? = nil) {
        self.init()
        self.title = title
        self.pages = pages
        self.published = Date(timeIntervalSince1970: Double(year - 1970) * 365.25 * 86_400)
        self.author = author
    }
}

/// The writer of books.
final class Author: PersistentModel {
    @Attribute var name: String = ""
    @Relationship var books: [Book] = []

    let persistentBackingData = BackingData()
    init() {}

    convenience init(_ name: String) {
        self.init()
        self.name = name
    }
}
