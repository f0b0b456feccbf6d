import Foundation
import ModelStoreAdapters
import ModelStoreMacros

@Model
final class Author {
    @Attribute(.unique) var name: String
    var born: Int?
    @Relationship(deleteRule: .cascade, inverse: \Book.author) var books: [Book] = []

    init(name: String, born: Int? = nil) {
        self.name = name
        self.born = born
    }
}

@Model
final class Book {
    var title: String
    var pages: Int
    var rating: Double
    var isFinished: Bool
    var added: Date
    var author: Author?
    @Relationship(deleteRule: .nullify, inverse: \Shelf.books) var shelves: [Shelf] = []

    init(title: String, pages: Int, rating: Double = 0, author: Author? = nil) {
        self.title = title
        self.pages = pages
        self.rating = rating
        self.isFinished = false
        self.added = .now
        self.author = author
    }
}

@Model
final class Shelf {
    @Attribute(.unique) var label: String
    var books: [Book] = []

    init(label: String) {
        self.label = label
    }
}

enum ReadingList {
    static func makeContainer() throws -> ModelContainer {
        try ModelContainer(
            for: Author.self, Book.self, Shelf.self,
            configurations: ModelConfiguration(isStoredInMemoryOnly: true))
    }

    static func unfinished(in context: ModelContext) throws -> [Book] {
        let descriptor = FetchDescriptor<Book>(
            predicate: #Predicate { !$0.isFinished },
            sortBy: [SortDescriptor(\.added, order: .reverse), SortDescriptor(\.title)])
        return try context.fetch(descriptor)
    }

    static func longBooks(atLeast pages: Int, in context: ModelContext) throws -> [Book] {
        let descriptor = FetchDescriptor<Book>(
            predicate: #Predicate { $0.pages >= pages && !$0.isFinished },
            sortBy: [SortDescriptor(\.pages, order: .reverse)])
        return try context.fetch(descriptor)
    }

    static func books(by authorName: String, in context: ModelContext) throws -> [Book] {
        let descriptor = FetchDescriptor<Book>(
            predicate: #Predicate { $0.author?.name == authorName },
            sortBy: [SortDescriptor(\.title)])
        return try context.fetch(descriptor)
    }

    static func topRated(_ count: Int, in context: ModelContext) throws -> [Book] {
        var descriptor = FetchDescriptor<Book>(
            sortBy: [SortDescriptor(\.rating, order: .reverse), SortDescriptor(\.title)])
        descriptor.fetchLimit = count
        return try context.fetch(descriptor)
    }

    static func search(_ text: String, in context: ModelContext) throws -> [Book] {
        let descriptor = FetchDescriptor<Book>(
            predicate: #Predicate { $0.title.localizedStandardContains(text) },
            sortBy: [SortDescriptor(\.title)])
        return try context.fetch(descriptor)
    }

    static func unfinishedCount(in context: ModelContext) throws -> Int {
        try context.fetchCount(FetchDescriptor<Book>(predicate: #Predicate { !$0.isFinished }))
    }

    static func finishEverything(by author: Author, in context: ModelContext) throws {
        for book in author.books {
            book.isFinished = true
        }
        try context.save()
    }

    static func removeAuthor(named name: String, in context: ModelContext) throws {
        try context.delete(model: Author.self, where: #Predicate { $0.name == name })
        try context.save()
    }
}
