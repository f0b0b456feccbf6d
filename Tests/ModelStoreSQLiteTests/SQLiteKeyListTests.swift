import Foundation
import Testing

@testable import ModelStoreSQLite

/// The JSON key lists that batch statements bind as one parameter (`json_each(?)`).
struct SQLiteKeyListTests {
    @Test func keyListsAreTheKeysAsJSONNumbers() throws {
        let keys: [Int64] = [0, 7, 10, 1_000_000, -42, .max, .min]
        let list = RowWriter.jsonArray(keys)
        #expect(list == "[0,7,10,1000000,-42,9223372036854775807,-9223372036854775808]")
        #expect(RowWriter.jsonArray([]) == "[]")
        let decoded = try JSONDecoder().decode([Int64].self, from: Data(list.utf8))
        #expect(decoded == keys)
    }
}
