// The fixture package's hand-written models with enum and Codable struct attributes (not compiled
// in the tests' target: `PackageSchemaExportTests` copies it into the package it exports).

import Foundation
import ModelStore

public enum Genre: String, Codable, CaseIterable {
    case fiction
    case nonFiction = "non-fiction"
    case poetry
}

public enum Rating: Int8, Codable, CaseIterable {
    case unrated = -1
    case one = 1
    case two
    case three
}

public struct Size: Codable, Hashable {
    public var width: Double
    public var height: Double
}

/// Stored under the key `row` for `aisle`: the export lists the keys, which are what is stored.
public struct Shelving: Codable, Hashable {
    public var aisle: String
    public var size: Size
    public var genres: [Genre]
    public var note: String?

    enum CodingKeys: String, CodingKey {
        case aisle = "row"
        case size, genres, note
    }
}

public final class Book: PersistentModel {
    @Attribute public var title: String = ""
    @Attribute public var genre: Genre = .poetry
    @Attribute public var rating: Rating?
    @Attribute public var shelving: Shelving?
    @Attribute public var byGenre: [String: Genre] = [:]
    @Attribute public var moves: [Shelving] = []

    public let persistentBackingData = BackingData()
    public init() {}
}
