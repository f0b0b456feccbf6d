import Foundation
import ModelStore
import ModelStoreInMemory
import Testing

/// What predicates translate to: the store-neutral filters a store receives.
struct QueryTranslationTests {
    func filters(_ predicate: Predicate<Reading>) throws -> [StoreFilter?] {
        let container = try ModelContainer(for: Reading.self, configurations: .inMemory())
        return try container.explain(FetchDescriptor(predicate: predicate)).conditions.map(\.filter)
    }

    @Test func comparisonsAndLogic() throws {
        let low = 2
        #expect(
            try filters(#Predicate { $0.int > 3 && !$0.flag }) == [
                .compare("int", .greater, .int(3)), .compare("flag", .notEqual, .bool(true)),
            ])
        #expect(try filters(#Predicate { 3 >= $0.int }) == [.compare("int", .lessOrEqual, .int(3))])
        #expect(try filters(#Predicate { $0.note != "x" }) == [.compare("note", .notEqual, .string("x"))])
        #expect(try filters(#Predicate { !($0.double < 2) }) == [.not(.compare("double", .less, .double(2)))])
        #expect(try filters(#Predicate { $0.int > low * 2 }) == [.compare("int", .greater, .int(4))])
        #expect(
            try filters(#Predicate { $0.flag || $0.int == 1 }) == [
                .or([.compare("flag", .equal, .bool(true)), .compare("int", .equal, .int(1))])
            ])
    }

    @Test func optionalsAndEnums() throws {
        let level = QueryLevel.high
        #expect(try filters(#Predicate { $0.note == nil }) == [.compare("note", .equal, .null)])
        #expect(try filters(#Predicate { ($0.score ?? 0) > 0.5 }) == [.compare("score", .greater, .double(0.5))])
        #expect(
            try filters(#Predicate { ($0.score ?? -1) < 0 }) == [
                .or([.compare("score", .equal, .null), .compare("score", .less, .double(0))])
            ])
        #expect(
            try filters(#Predicate { $0.note.flatMap { $0.starts(with: "N") } ?? false }) == [
                .and([.compare("note", .notEqual, .null), .text("note", .hasPrefix("N"))])
            ])
        #expect(try filters(#Predicate { $0.level == level }) == [.compare("level", .equal, .string("high"))])
        #expect(try filters(#Predicate { $0.level.rawValue > "l" }) == [.compare("level", .greater, .string("l"))])
    }

    @Test func textMembershipAndRanges() throws {
        let (low, high) = (2, 7)
        let names = ["a", "Rome"]
        #expect(
            try filters(#Predicate { $0.text.contains("o") && $0.text.starts(with: "R") }) == [
                .text("text", .contains("o")), .text("text", .hasPrefix("R")),
            ])
        #expect(try filters(#Predicate { $0.text.contains(/(?i)rome/) }) == [.text("text", .matchesRegex("(?i)rome"))])
        #expect(try filters(#Predicate { $0.text.isEmpty }) == [.compare("text", .equal, .string(""))])
        #expect(
            try filters(#Predicate { names.contains($0.text) }) == [.isIn("text", [.string("a"), .string("Rome")])])
        #expect(
            try filters(#Predicate { (low...high).contains($0.int) }) == [
                .range("int", StoreRange(lower: .int(2), upper: .int(7), includesUpper: true))
            ])
        #expect(
            try filters(#Predicate { (low..<high).contains($0.int) }) == [
                .range("int", StoreRange(lower: .int(2), upper: .int(7), includesUpper: false))
            ])
    }

    @Test func relationshipsAndIdentifiers() throws {
        #expect(
            try filters(#Predicate { $0.station?.name == "North" }) == [
                .compare("station.name", .equal, .string("North"))
            ])
        #expect(try filters(#Predicate { $0.station == nil }) == [.compare("station", .equal, .null)])
        #expect(
            try filters(#Predicate { $0.tags.contains { $0.weight > 2 } }) == [
                .any("tags", .compare("weight", .greater, .int(2)))
            ])
        #expect(
            try filters(#Predicate { $0.tags.allSatisfy { $0.label == "red" } }) == [
                .all("tags", .compare("label", .equal, .string("red")))
            ])
        #expect(try filters(#Predicate { $0.tags.isEmpty }) == [.not(.any("tags", .constant(true)))])
        let id = PersistentIdentifier.identifier(for: "s", entityName: "Reading", primaryKey: 7)
        #expect(try filters(#Predicate { $0.persistentModelID == id }) == [.identifiers([id])])
        #expect(try filters(#Predicate { [id].contains($0.persistentModelID) }) == [.identifiers([id])])
        #expect(try filters(#Predicate { $0.id == id }) == [.identifiers([id])])
    }

    @Test func whatDoesNotTranslate() throws {
        #expect(try filters(#Predicate { $0.text.count > 2 }) == [nil])
        #expect(try filters(#Predicate { $0.double != $0.double }) == [nil])
        #expect(try filters(#Predicate { $0.note! == "x" }) == [nil])
        #expect(try filters(#Predicate { $0.int > 0 || $0.text.count > 3 }) == [nil])
    }
}
