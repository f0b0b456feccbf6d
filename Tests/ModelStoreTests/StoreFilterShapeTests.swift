import Foundation
import ModelStore
import Testing

/// ``StoreFilterShape``: what a store may cache a filter's translation by.
struct StoreFilterShapeTests {
    @Test func filtersThatDifferOnlyInOperandsShareAShape() throws {
        let first = try #require(
            StoreFilterShape(.and([.equal("name", .string("a")), .compare("age", .greater, .int(3))])))
        let second = try #require(
            StoreFilterShape(.and([.equal("name", .string("b")), .compare("age", .greater, .int(40))])))
        #expect(first == second)
        #expect(first.hashValue == second.hashValue)
        #expect(first.operands == [.string("a"), .int(3)])
        #expect(second.operands == [.string("b"), .int(40)])
    }

    @Test func theOperandsKindsAndTheStructureArePartOfTheShape() throws {
        let value = try #require(StoreFilterShape(.equal("name", .string("a"))))
        #expect(value != StoreFilterShape(.equal("name", .null)))
        #expect(value != StoreFilterShape(.equal("name", .int(1))))
        #expect(value != StoreFilterShape(.equal("title", .string("a"))))
        #expect(value != StoreFilterShape(.compare("name", .less, .string("a"))))
        let number = try #require(StoreFilterShape(.equal("x", .double(1))))
        #expect(number != StoreFilterShape(.equal("x", .double(.nan))))
        #expect(StoreFilterShape(.equal("x", .double(.nan))) == StoreFilterShape(.equal("x", .double(.nan))))
        #expect(StoreFilterShape(.equal("x", .uint(1))) != StoreFilterShape(.equal("x", .uint(.max))))
        #expect(StoreFilterShape(.isIn("x", [.int(1)])) != StoreFilterShape(.isIn("x", [.int(1), .int(2)])))
    }

    @Test func operandsComeInTheOrderOfADepthFirstWalk() throws {
        let filter = StoreFilter.or([
            .range("n", StoreRange(lower: .int(1), upper: .int(9), includesUpper: true)),
            .not(.text("name", .hasPrefix("ab"))),
            .any("children", .isIn("code", [.string("x"), .null])),
        ])
        let shape = try #require(StoreFilterShape(filter))
        #expect(shape.operands == [.int(1), .int(9), .string("ab"), .string("x"), .null])
    }

    @Test func identifierFiltersHaveNoShape() {
        let id = PersistentIdentifier.temporary(entityName: "Item")
        #expect(StoreFilterShape(.identifiers([id])) == nil)
        #expect(StoreFilterShape(.and([.equal("name", .string("a")), .identifiers([id])])) == nil)
    }
}
