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

/// The abstract root of a class hierarchy: every medium has a unique title and a year; only its
/// subclasses' models are saved.
class Medium: PersistentModel {
    static var abstractClasses: [any PersistentModel.Type] { [Medium.self] }
    @Attribute(.unique) var title: String = ""
    @Attribute var year: Int = 0

    let persistentBackingData = BackingData()
    required init() {}
}

/// A film, with its running time.
class Film: Medium {
    @Attribute var minutes: Int = 0
}

/// A film about a subject.
final class Documentary: Film {
    @Attribute var subject: String = ""
}

/// An album, with its number of tracks.
final class Album: Medium {
    @Attribute var tracks: Int = 0
}

/// A store in its own temporary folder, written through the app's model types and browsed without them.
struct LibraryFixture {
    /// The folder, removed by ``remove()``.
    let folder: URL
    /// The store's URL.
    let url: String

    /// A new temporary folder with the URL of a store of `scheme` (`sqlite`, `json` or `log`) in it.
    private init(folderNamed name: String, scheme: String = "sqlite") throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("studio-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        url = scheme + ":" + folder.appendingPathComponent(name).path
    }

    /// The class hierarchy's model types, root first.
    static let mediaTypes: [any PersistentModel.Type] = [Medium.self, Film.self, Documentary.self, Album.self]

    /// An SQLite store of a class hierarchy: the films 'Alien' (1979, 117 min) and 'Heat' (1995), the
    /// documentary 'Koyaanisqatsi' (1982, about 'cities'), and the album 'Low' (1977, 11 tracks).
    static func media() throws -> LibraryFixture {
        let fixture = try LibraryFixture(folderNamed: "media.sqlite")
        let context = ModelContext(try ModelContainer(for: Schema(mediaTypes), url: fixture.url))
        context.author = "fixture"
        for (title, year, minutes) in [("Alien", 1979, 117), ("Heat", 1995, 170)] {
            let film = Film()
            film.title = title
            film.year = year
            film.minutes = minutes
            context.insert(film)
        }
        let documentary = Documentary()
        documentary.title = "Koyaanisqatsi"
        documentary.year = 1982
        documentary.minutes = 86
        documentary.subject = "cities"
        context.insert(documentary)
        let album = Album()
        album.title = "Low"
        album.year = 1977
        album.tracks = 11
        context.insert(album)
        try context.save()
        return fixture
    }

    /// The media as the app reads them, by title: each one's class and minutes (for films).
    func media() throws -> [String: (String, Int?)] {
        let context = ModelContext(try ModelContainer(for: Schema(Self.mediaTypes), url: url))
        return Dictionary(
            uniqueKeysWithValues: try context.fetch(FetchDescriptor<Medium>()).map { medium in
                (medium.title, (String(describing: type(of: medium)), (medium as? Film)?.minutes))
            })
    }

    /// A store of `scheme` (SQLite unless `json` or `log` is given) with `authors` authors (born
    /// 1900 + i % 50, every third active) and two books each for the first five.
    init(authors: Int = 30, scheme: String = "sqlite") throws {
        try self.init(folderNamed: "library.\(scheme)", scheme: scheme)
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
