import Foundation
import ModelStore
import Testing

// Models and a runner for the tests that drive this package's `modelstore` on PostgreSQL stores.

/// An author; deleting one deletes their books.
final class ShelfAuthor: PersistentModel {
    @Attribute(.unique) var name: String = ""
    @Relationship(deleteRule: .cascade, inverse: \ShelfBook.author) var books: [ShelfBook] = []

    let persistentBackingData = BackingData()
    init() {}

    convenience init(_ name: String) {
        self.init()
        self.name = name
    }
}

/// A book with an optional subtitle, and tags that books share (a to-many relationship without an inverse).
final class ShelfBook: PersistentModel {
    @Attribute var title: String = ""
    @Attribute var pages: Int = 0
    @Attribute var subtitle: String?
    @Relationship var author: ShelfAuthor?
    @Relationship var tags: [ShelfTag] = []

    let persistentBackingData = BackingData()
    init() {}
}

/// A tag books share.
final class ShelfTag: PersistentModel {
    @Attribute(.unique) var label: String = ""

    let persistentBackingData = BackingData()
    init() {}
}

/// The shelf the tool tests store: 3 authors, 4 books, 2 tags.
enum ToolShelf {
    static let types: [any PersistentModel.Type] = [ShelfAuthor.self, ShelfBook.self, ShelfTag.self]
    static let counts = ["ShelfAuthor": 3, "ShelfBook": 4, "ShelfTag": 2]

    /// Saves the shelf into the store a configuration names.
    static func seed(_ configuration: any DataStoreConfiguration) throws {
        let container = try ModelContainer(for: Schema(types), configurations: [configuration])
        let context = ModelContext(container)
        let tags = ["classic", "poetry"].map { label in
            let tag = ShelfTag()
            tag.label = label
            context.insert(tag)
            return tag
        }
        let authors = ["Jane Austen", "Virginia Woolf", "Matsuo Basho"].map { name in
            let author = ShelfAuthor(name)
            context.insert(author)
            return author
        }
        // Title, pages, author, tags: one book has two tags, one none.
        let books: [(String, Int, Int, [Int])] = [
            ("Emma", 474, 0, [0]), ("Persuasion", 249, 0, [0]), ("Orlando", 333, 1, []),
            ("Narrow Road", 96, 2, [1, 0]),
        ]
        for (title, pages, author, tagNumbers) in books {
            let book = ShelfBook()
            book.title = title
            book.pages = pages
            context.insert(book)
            book.author = authors[author]
            book.tags = tagNumbers.map { tags[$0] }
        }
        try context.save()
    }

    /// Every book as `title by author [tags]`, sorted: what a copy must keep.
    static func books(_ configuration: any DataStoreConfiguration) throws -> [String] {
        let container = try ModelContainer(for: Schema(types), configurations: [configuration])
        let context = ModelContext(container)
        return try context.fetch(FetchDescriptor<ShelfBook>()).map { book in
            "\(book.title) by \(book.author?.name ?? "nobody") \(book.tags.map(\.label).sorted())"
        }.sorted()
    }
}

/// This package's `modelstore-postgres` (the `modelstore` tool with PostgreSQL linked), run as a process.
struct PostgreSQLTool {
    /// What a run printed, and its exit status.
    struct Output: CustomStringConvertible {
        let status: Int32
        let standardOutput: String
        let standardError: String

        var description: String { "status \(status)\nstdout:\n\(standardOutput)\nstderr:\n\(standardError)" }
    }

    /// The executable built beside the test bundle.
    private var executable: URL {
        URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent(
            "modelstore-postgres")
    }

    /// A `postgres://` URL of the test server in a namespace of its own.
    static func url(namespace: String) throws -> String {
        let base = try #require(PostgreSQLServer.url)
        return base + (base.contains("?") ? "&" : "?") + "namespace=" + namespace
    }

    /// Runs `modelstore` with the arguments in `directory`.
    func run(_ arguments: [String], in directory: URL? = nil) throws -> Output {
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        if let directory { process.currentDirectoryURL = directory }
        let output = Pipe()
        let error = Pipe()
        process.standardOutput = output
        process.standardError = error
        try process.run()
        // Read both pipes while the process runs, so neither fills up and blocks it.
        let errorData = LockedData()
        let reader = Thread { errorData.set(error.fileHandleForReading.readDataToEndOfFile()) }
        reader.start()
        let outputData = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        while !errorData.isSet { usleep(1000) }
        return Output(
            status: process.terminationStatus, standardOutput: String(decoding: outputData, as: UTF8.self),
            standardError: String(decoding: errorData.value, as: UTF8.self))
    }

    /// Runs `modelstore … --json`, expecting `status`, and returns the object it printed.
    func json(_ arguments: [String], status: Int32 = 0, sourceLocation: SourceLocation = #_sourceLocation) throws
        -> [String: Any]
    {
        let output = try run(arguments + ["--json"])
        #expect(output.status == status, "\(arguments): \(output)", sourceLocation: sourceLocation)
        let object = try JSONSerialization.jsonObject(with: Data(output.standardOutput.utf8))
        return try #require(object as? [String: Any], "\(output)", sourceLocation: sourceLocation)
    }

    /// Entity name to model count (and whether estimated) from a report's `"entities"`.
    static func counts(_ report: [String: Any]) -> [String: Int] {
        var counts: [String: Int] = [:]
        for entity in report["entities"] as? [[String: Any]] ?? [] {
            if let name = entity["name"] as? String, let count = entity["modelCount"] as? Int { counts[name] = count }
        }
        return counts
    }
}

/// Data one thread writes and another waits for.
final class LockedData: @unchecked Sendable {
    // Safety: every access holds `lock`.
    private let lock = NSLock()
    private var data: Data?

    func set(_ value: Data) { lock.withLock { data = value } }
    var isSet: Bool { lock.withLock { data != nil } }
    var value: Data { lock.withLock { data ?? Data() } }
}
