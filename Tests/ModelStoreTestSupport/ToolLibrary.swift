import Foundation
import ModelStore
import ModelStoreAppendLog
import Testing

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

// Models, seed data and a runner for the tests that drive the `modelstore` executable, and for the
// store tests that seed and compare the same library.

/// An author; deleting one deletes their books.
public final class ToolAuthor: PersistentModel {
    @Attribute(.unique) public var name: String = ""
    @Relationship(deleteRule: .cascade, inverse: \ToolBook.author) public var books: [ToolBook] = []

    public let persistentBackingData = BackingData()
    public init() {}

    public convenience init(_ name: String) {
        self.init()
        self.name = name
    }
}

/// A book, with an optional subtitle and tags that books share (a relationship without an inverse).
public final class ToolBook: PersistentModel {
    @Attribute public var title: String = ""
    @Attribute public var pages: Int = 0
    @Attribute public var subtitle: String?
    @Relationship public var author: ToolAuthor?
    @Relationship public var tags: [ToolTag] = []

    public let persistentBackingData = BackingData()
    public init() {}

    public convenience init(_ title: String, pages: Int, author: ToolAuthor, tags: [ToolTag] = []) {
        self.init()
        self.title = title
        self.pages = pages
        self.author = author
        self.tags = tags
    }
}

/// A tag books share.
public final class ToolTag: PersistentModel {
    @Attribute(.unique) public var label: String = ""

    public let persistentBackingData = BackingData()
    public init() {}

    public convenience init(_ label: String) {
        self.init()
        self.label = label
    }
}

/// The library the tests store: what was saved, by a description that survives a conversion.
public enum ToolLibrary {
    public static let types: [any PersistentModel.Type] = [ToolAuthor.self, ToolBook.self, ToolTag.self]

    /// Authors, books and tags, with one author (and, by cascade, their book) deleted after the
    /// first save, so the primary keys that remain have gaps a renumbering copy would close.
    public static func seed(_ configuration: any DataStoreConfiguration) throws {
        try withContext(configuration) { context in try seed(context) }
    }

    private static func seed(_ context: ModelContext) throws {
        let classic = ToolTag("classic")
        let novel = ToolTag("novel")
        let poetry = ToolTag("poetry")
        let austen = ToolAuthor("Jane Austen")
        let gone = ToolAuthor("Nobody Remembered")
        let woolf = ToolAuthor("Virginia Woolf")
        let basho = ToolAuthor("Matsuo Basho")
        for model in [classic, novel, poetry] { context.insert(model) }
        for model in [austen, gone, woolf, basho] { context.insert(model) }
        context.insert(ToolBook("Pride and Prejudice", pages: 432, author: austen, tags: [classic, novel]))
        context.insert(ToolBook("Emma", pages: 474, author: austen, tags: [classic, novel]))
        context.insert(ToolBook("Forgotten", pages: 12, author: gone))
        let dalloway = ToolBook("Mrs Dalloway", pages: 194, author: woolf, tags: [novel])
        dalloway.subtitle = "A Novel"
        context.insert(dalloway)
        context.insert(ToolBook("The Narrow Road", pages: 96, author: basho, tags: [classic, poetry]))
        try context.save()
        context.delete(gone)
        try context.save()
    }

    /// Saves `saves` times, each changing one book's page count and back, so that most of a log's
    /// bytes describe values that were replaced.
    public static func churn(_ configuration: any DataStoreConfiguration, saves: Int) throws {
        try withContext(configuration) { context in try churn(context, saves: saves) }
    }

    private static func churn(_ context: ModelContext, saves: Int) throws {
        let book = try #require(try context.fetch(FetchDescriptor<ToolBook>()).first { $0.title == "Emma" })
        let pages = book.pages
        for save in 0..<saves {
            book.pages = save.isMultiple(of: 2) && save < saves - 1 ? pages + 1 : pages
            book.subtitle = save < saves - 1 ? "draft \(save) " + String(repeating: "x", count: 1_800) : nil
            try context.save()
        }
    }

    /// The models of a store, as lines that name each model by entity and primary key and list its
    /// values and relationships by key: equal for two stores exactly when a conversion kept the
    /// primary keys, the values and the relationships.
    public static func describe(_ configuration: any DataStoreConfiguration) throws -> [String] {
        try withContext(configuration) { context in try describe(context) }
    }

    public static func describe(_ context: ModelContext) throws -> [String] {
        func key(_ model: some PersistentModel) -> String { "\(model.persistentModelID.primaryKey)" }
        var lines: [String] = []
        for author in try context.fetch(FetchDescriptor<ToolAuthor>()) {
            let books = author.books.map(key).sorted()
            lines.append("ToolAuthor \(key(author)) \(author.name) books=\(books)")
        }
        for book in try context.fetch(FetchDescriptor<ToolBook>()) {
            let tags = book.tags.map(key).sorted()
            lines.append(
                "ToolBook \(key(book)) \(book.title) \(book.pages) \(book.subtitle ?? "-") "
                    + "author=\(book.author.map(key) ?? "-") tags=\(tags)")
        }
        for tag in try context.fetch(FetchDescriptor<ToolTag>()) {
            lines.append("ToolTag \(key(tag)) \(tag.label)")
        }
        return lines.sorted()
    }

    /// Runs `body` on a context of a container for the library's types, then closes the store.
    @discardableResult
    public static func withContext<Result>(
        _ configuration: any DataStoreConfiguration, _ body: (ModelContext) throws -> Result
    ) throws -> Result {
        let container = try open(configuration)
        defer { close(container) }
        return try body(ModelContext(container))
    }

    /// A container for the library's types, opened once no other process holds an append log's lock.
    public static func open(_ configuration: any DataStoreConfiguration) throws -> ModelContainer {
        if let log = configuration as? AppendLogStoreConfiguration { LogLock.waitUntilFree(log.directory) }
        return try ModelContainer(for: Schema(types), configurations: [configuration])
    }

    /// Closes a container's append log, and waits until its lock is free for the next process.
    public static func close(_ container: ModelContainer) {
        guard let store = container.stores.first as? AppendLogStore else { return }
        store.close()
        LogLock.waitUntilFree(store.directory)
    }

    /// How many models of each entity `seed` leaves.
    public static let counts = ["ToolAuthor": 3, "ToolBook": 4, "ToolTag": 3]
}

/// Waiting for an append log's lock to be free.
///
/// The tests run in parallel and spawn processes. A child being spawned holds a copy of every
/// descriptor of the test process until it starts its executable, so for a moment after a test
/// closes a log, the log's `flock` lock may still be held through that copy: the next open, in
/// the test or in `modelstore`, would find it locked. Tests that close a log wait it out.
public enum LogLock {
    /// Returns once nobody holds the lock of the log in `directory` (or after 10 seconds).
    public static func waitUntilFree(_ directory: URL) {
        let path = directory.appendingPathComponent("lock").path
        let deadline = Date().addingTimeInterval(10)
        while Date() < deadline {
            let descriptor = open(path, O_RDONLY | O_CLOEXEC)
            guard descriptor >= 0 else { return }
            defer { close(descriptor) }
            if flock(descriptor, LOCK_EX | LOCK_NB) == 0 {
                flock(descriptor, LOCK_UN)
                return
            }
            usleep(10_000)
        }
    }
}

/// Runs the `modelstore` executable in a test's directory.
public struct ModelStoreTool {
    public let process: SampleProcess
    public let directory: TemporaryDirectory

    public init() throws {
        process = try SampleProcess(named: "modelstore")
        directory = try TemporaryDirectory()
    }

    /// A file URL in the test's directory.
    public func url(_ name: String) -> URL { directory.url.appendingPathComponent(name) }

    /// Runs `modelstore` with the arguments, expecting the exit status.
    @discardableResult
    public func run(_ arguments: String..., status: Int32 = 0, sourceLocation: SourceLocation = #_sourceLocation) throws
        -> SampleProcess.Output
    {
        let output = try process.run(arguments, in: directory.url)
        #expect(
            output.status == status, "modelstore \(arguments.joined(separator: " ")): \(output)",
            sourceLocation: sourceLocation)
        return output
    }

    /// Runs `modelstore … --json`, expecting the exit status, and parses what it printed.
    public func json(_ arguments: String..., status: Int32 = 0, sourceLocation: SourceLocation = #_sourceLocation)
        throws
        -> [String: Any]
    {
        let output = try process.run(arguments + ["--json"], in: directory.url)
        #expect(
            output.status == status, "modelstore \(arguments.joined(separator: " ")) --json: \(output)",
            sourceLocation: sourceLocation)
        #expect(
            output.standardError.isEmpty, "nothing on stderr with --json: \(output)", sourceLocation: sourceLocation)
        let object = try JSONSerialization.jsonObject(with: Data(output.standardOutput.utf8))
        return try #require(object as? [String: Any], "\(output)", sourceLocation: sourceLocation)
    }

    /// The `"error"` object of a failed `--json` run.
    public func jsonError(_ arguments: String..., status: Int32, sourceLocation: SourceLocation = #_sourceLocation)
        throws
        -> [String: Any]
    {
        let output = try process.run(arguments + ["--json"], in: directory.url)
        #expect(output.status == status, "\(output)", sourceLocation: sourceLocation)
        let object = try JSONSerialization.jsonObject(with: Data(output.standardOutput.utf8)) as? [String: Any]
        let error = try #require(object?["error"] as? [String: Any], "\(output)", sourceLocation: sourceLocation)
        #expect(error["status"] as? Int == Int(status), sourceLocation: sourceLocation)
        return error
    }

    /// Entity name to model count, from a report's `"entities"`.
    public static func counts(_ report: [String: Any]) -> [String: Int] {
        var counts: [String: Int] = [:]
        for entity in report["entities"] as? [[String: Any]] ?? [] {
            if let name = entity["name"] as? String, let count = entity["modelCount"] as? Int { counts[name] = count }
        }
        return counts
    }
}
