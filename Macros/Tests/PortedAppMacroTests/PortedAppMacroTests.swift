import Foundation
import ModelStoreMacros
import Testing

/// The SwiftData app of `Tests/PortedAppTests` (`SwiftDataOriginal/ReadingList.swift.txt` there),
/// ported with ModelStoreMacros (`ReadingList.swift` here): it runs as the app expects, and differs
/// from the original only in its import lines.
struct PortedAppMacroTests {
    let context: ModelContext

    init() throws {
        context = ModelContext(try ReadingList.makeContainer())
        let ursula = Author(name: "Ursula K. Le Guin", born: 1929)
        let italo = Author(name: "Italo Calvino")
        context.insert(Book(title: "The Dispossessed", pages: 387, rating: 4.5, author: ursula))
        context.insert(Book(title: "A Wizard of Earthsea", pages: 183, rating: 4, author: ursula))
        context.insert(Book(title: "Invisible Cities", pages: 165, rating: 5, author: italo))
        context.insert(Book(title: "Le Musée imaginaire", pages: 420, rating: 3))
        try context.save()
    }

    @Test func thePortedQueriesAnswerAsTheAppExpects() throws {
        #expect(try ReadingList.unfinishedCount(in: context) == 4)
        #expect(
            try ReadingList.longBooks(atLeast: 300, in: context).map(\.title) == [
                "Le Musée imaginaire", "The Dispossessed",
            ])
        #expect(
            try ReadingList.books(by: "Ursula K. Le Guin", in: context).map(\.title) == [
                "A Wizard of Earthsea", "The Dispossessed",
            ])
        #expect(try ReadingList.topRated(2, in: context).map(\.title) == ["Invisible Cities", "The Dispossessed"])
        #expect(try ReadingList.search("musee", in: context).map(\.title) == ["Le Musée imaginaire"])
        #expect(try ReadingList.search("EARTH", in: context).map(\.title) == ["A Wizard of Earthsea"])

        let ursula = try #require(try ReadingList.books(by: "Ursula K. Le Guin", in: context).first?.author)
        #expect(ursula.books.map(\.title).sorted() == ["A Wizard of Earthsea", "The Dispossessed"])
        try ReadingList.finishEverything(by: ursula, in: context)
        #expect(
            try ReadingList.unfinished(in: context).map(\.title).sorted() == [
                "Invisible Cities", "Le Musée imaginaire",
            ])
        try ReadingList.removeAuthor(named: "Ursula K. Le Guin", in: context)
        #expect(try context.fetchCount(FetchDescriptor<Book>()) == 2, "the cascade removed her books")
    }

    @Test func thePortDiffersFromTheOriginalOnlyInItsImports() throws {
        let folder = URL(filePath: #filePath).deletingLastPathComponent()
        let original = try String(
            contentsOf: folder.appending(path: "../../../Tests/PortedAppTests/SwiftDataOriginal/ReadingList.swift.txt"),
            encoding: .utf8)
        let port = try String(contentsOf: folder.appending(path: "ReadingList.swift"), encoding: .utf8)
        let count = ImportOnlyPort(original: original, port: port)
        #expect(count.linesBesideImportsMatch, "the port changes lines other than its imports")
        let readme = try String(contentsOf: folder.appending(path: "../../README.md"), encoding: .utf8)
        #expect(
            readme.contains(count.summary),
            "Macros/README.md should quote the port's count as it is now: \"\(count.summary)\"")
    }
}

/// How a port whose only changes are import lines compares with its original, counted as
/// `Tests/PortedAppTests` counts a port: non-blank lines, surrounding white space trimmed.
struct ImportOnlyPort {
    /// Whether the lines other than imports are the same lines, in the same order.
    let linesBesideImportsMatch: Bool
    let originalLines: Int
    let keptLines: Int
    let addedLines: Int

    init(original: String, port: String) {
        func lines(_ text: String) -> [String] {
            text.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        }
        func isImport(_ line: String) -> Bool { line.hasPrefix("import ") }
        let (old, new) = (lines(original), lines(port))
        linesBesideImportsMatch = old.filter { !isImport($0) } == new.filter { !isImport($0) }
        let oldImports = old.filter(isImport)
        let newImports = Set(new.filter(isImport))
        let keptImports = oldImports.filter(newImports.contains).count
        originalLines = old.count
        keptLines = old.count - oldImports.count + keptImports
        addedLines = newImports.count - keptImports
    }

    /// The sentence the README quotes, worded as `Tests/PortedAppTests` words its own.
    var summary: String {
        "keeps \(keptLines) of the original's \(originalLines) lines verbatim (\(keptLines * 100 / originalLines)%), "
            + "changes or drops \(originalLines - keptLines) and adds \(addedLines)"
    }
}
