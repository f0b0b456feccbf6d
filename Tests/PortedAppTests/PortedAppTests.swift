import Foundation
import ModelStore
import Testing

/// A small SwiftData app's model and query code (`SwiftDataOriginal/ReadingList.swift.txt`), ported
/// as a developer moving it to Linux would (`ReadingList.swift`): the port runs, and the lines it
/// had to change are counted and quoted in the README, so the number cannot drift.
struct PortedAppTests {
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
        try ReadingList.finishEverything(by: ursula, in: context)
        #expect(
            try ReadingList.unfinished(in: context).map(\.title).sorted() == [
                "Invisible Cities", "Le Musée imaginaire",
            ])
        try ReadingList.removeAuthor(named: "Ursula K. Le Guin", in: context)
        #expect(try context.fetchCount(FetchDescriptor<Book>()) == 2, "the cascade removed her books")
    }

    @Test func theReadmeQuotesHowManyLinesThePortChanged() throws {
        let folder = URL(filePath: #filePath).deletingLastPathComponent()
        let original = try String(
            contentsOf: folder.appending(path: "SwiftDataOriginal/ReadingList.swift.txt"), encoding: .utf8)
        let port = try String(contentsOf: folder.appending(path: "ReadingList.swift"), encoding: .utf8)
        let count = PortDifference(original: original, port: port)
        let readme = try String(
            contentsOf: folder.deletingLastPathComponent().deletingLastPathComponent().appending(path: "README.md"),
            encoding: .utf8)
        #expect(
            readme.contains(count.summary),
            "README.md should quote the port's count as it is now: \"\(count.summary)\"")
    }

    @Test func theCountIsALineDiff() {
        let count = PortDifference(original: "a\n\nb\nc\nd\n", port: "a\nB\nc\n\nd\ne\n")
        #expect(count.originalLines == 4 && count.keptLines == 3 && count.addedLines == 2)
    }
}

/// The lines a port keeps from its original, by the longest common subsequence of their non-blank
/// lines with surrounding white space trimmed.
struct PortDifference {
    let originalLines: Int
    let keptLines: Int
    let addedLines: Int

    init(original: String, port: String) {
        func lines(_ text: String) -> [Substring] {
            text.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces)[...] }.filter { !$0.isEmpty }
        }
        let a = lines(original)
        let b = lines(port)
        var row = [Int](repeating: 0, count: b.count + 1)
        for x in a {
            var diagonal = 0
            for (j, y) in b.enumerated() {
                let above = row[j + 1]
                row[j + 1] = x == y ? diagonal + 1 : max(above, row[j])
                diagonal = above
            }
        }
        originalLines = a.count
        keptLines = row[b.count]
        addedLines = b.count - keptLines
    }

    /// The sentence the README quotes.
    var summary: String {
        let percent = originalLines == 0 ? 100 : keptLines * 100 / originalLines
        return "keeps \(keptLines) of the original's \(originalLines) lines verbatim (\(percent)%), "
            + "changes or drops \(originalLines - keptLines) and adds \(addedLines)"
    }
}
