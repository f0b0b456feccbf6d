import ModelStore
import Testing

@testable import ModelStoreStudio

@Suite struct FilterParserTests {
    let schema = Schema([Author.self, Book.self])
    var author: Schema.Entity { schema.entities.first { $0.name == "Author" }! }
    var book: Schema.Entity { schema.entities.first { $0.name == "Book" }! }

    func parse(_ text: String, _ entity: Schema.Entity? = nil) throws -> StoreFilter? {
        try FilterParser(schema: schema).parse(text, entity: entity ?? author)
    }

    func syntaxError(_ text: String) -> FilterSyntaxError? {
        do {
            _ = try FilterParser(schema: schema).parse(text, entity: author)
            return nil
        } catch {
            return error
        }
    }

    @Test func readsTheIssuesExample() throws {
        #expect(
            try parse("born >= 65 && name.contains(\"a\")")
                == .and([.compare("born", .greaterOrEqual, .int(65)), .text("name", .contains("a"))]))
    }

    @Test func readsPrecedenceNegationAndGrouping() throws {
        #expect(
            try parse("!(born < 1920 || nickname == nil) && active")
                == .and([
                    .not(.or([.compare("born", .less, .int(1920)), .compare("nickname", .equal, .null)])),
                    .compare("active", .equal, .bool(true)),
                ]))
        #expect(try parse("1920 <= born") == .compare("born", .greaterOrEqual, .int(1920)))
        #expect(try parse("  ") == nil)
    }

    @Test func readsListsRangesPrefixesRegexesAndPaths() throws {
        #expect(try parse("born in [1901, 1902]") == .isIn("born", [.int(1901), .int(1902)]))
        #expect(
            try parse("born in 1901..<1910")
                == .range("born", StoreRange(lower: .int(1901), upper: .int(1910), includesUpper: false)))
        #expect(try parse("name.starts(with: \"au\")") == .text("name", .hasPrefix("au")))
        #expect(try parse("name.contains(/0[0-9]$/)") == .text("name", .matchesRegex("0[0-9]$")))
        #expect(try parse("author.born > 1900", book) == .compare("author.born", .greater, .int(1900)))
        #expect(try parse("books.contains { pages > 120 }") == .any("books", .compare("pages", .greater, .int(120))))
        #expect(try parse("author == nil", book) == .compare("author", .equal, .null))
    }

    @Test func pointsAtAnUnknownProperty() throws {
        let error = try #require(syntaxError("born > 3 && nme == \"x\""))
        #expect(error.position == 12)
        #expect(error.message.contains("'Author' has no property 'nme'"))
        #expect(error.description.contains("\n            ^\n"))
    }

    @Test func pointsAtAValueOfTheWrongType() throws {
        let error = try #require(syntaxError("born == \"1900\""))
        #expect(error.position == 8)
        #expect(error.message.contains("for 'born' (Int)"))
    }

    @Test func pointsAtTheEndOfATruncatedFilter() throws {
        let error = try #require(syntaxError("born >= "))
        #expect(error.position == 8)
        #expect(error.message.contains("not a value"))
    }

    @Test func pointsAtAnUnclosedStringAndParenthesis() throws {
        #expect(syntaxError("name == \"abc")?.position == 8)
        let parenthesis = try #require(syntaxError("(born > 1 && active"))
        #expect(parenthesis.position == 19)
        #expect(parenthesis.message.contains("to close the '(' at character 1"))
    }

    @Test func refusesNilForANonOptionalAttribute() throws {
        let error = try #require(syntaxError("born == nil"))
        #expect(error.message.contains("'born' is not optional"))
        #expect(error.position == 8)
    }

    @Test func refusesTextMethodsOnNumbers() throws {
        let error = try #require(syntaxError("born.contains(\"1\")"))
        #expect(error.position == 5)
        #expect(error.message.contains("not a String attribute"))
    }
}
