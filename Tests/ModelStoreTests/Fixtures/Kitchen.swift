import Foundation
import ModelStore

/// A status stored by its raw value.
enum KitchenPriority: String, Codable, Sendable {
    case low, normal, high
}

/// A composite value stored as named fields.
struct PostalAddress: Codable, Hashable, Sendable {
    var street: String
    var zip: Int
    var tags: [String]
}

/// A model with one attribute of every supported kind.
final class Kitchen: PersistentModel {
    @Attribute var flag: Bool = false
    @Attribute var int: Int = 0
    @Attribute var int8: Int8 = 0
    @Attribute var int16: Int16 = 0
    @Attribute var int32: Int32 = 0
    @Attribute var int64: Int64 = 0
    @Attribute var uint: UInt = 0
    @Attribute var uint8: UInt8 = 0
    @Attribute var uint16: UInt16 = 0
    @Attribute var uint32: UInt32 = 0
    @Attribute var uint64: UInt64 = 0
    @Attribute var double: Double = 0
    @Attribute var float: Float = 0
    @Attribute var decimal: Decimal = 0
    @Attribute var string: String = ""
    @Attribute var date: Date = Date(timeIntervalSinceReferenceDate: 0)
    @Attribute var data: Data = Data()
    @Attribute var uuid: UUID = UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))
    @Attribute var url: URL = URL(string: "https://example.com")!
    @Attribute var optionalString: String?
    @Attribute var optionalInt: Int? = nil
    @Attribute var strings: [String] = []
    @Attribute var scores: [String: Double] = [:]
    @Attribute var counts: [Int: String] = [:]
    @Attribute var priority: KitchenPriority = .normal
    @Attribute var optionalPriority: KitchenPriority?
    @Attribute var address: PostalAddress = PostalAddress(street: "", zip: 0, tags: [])
    @Attribute(.ephemeral) var draft: String = ""
    @Transient var isSelected = false
    var notPersisted = 0

    let persistentBackingData = BackingData()
    init() {}
}

/// A model whose attribute type cannot be stored.
final class Unstorable: PersistentModel {
    struct Opaque { var pointer: Int }
    @Attribute var name: String = ""
    @Attribute var opaque: Opaque = Opaque(pointer: 0)

    let persistentBackingData = BackingData()
    init() {}
}

/// A model whose inverse points to a relationship of the wrong type.
final class Orphan: PersistentModel {
    @Relationship(inverse: \Destination.trips) var owner: Destination?

    let persistentBackingData = BackingData()
    init() {}
}

/// A model whose index names a property that isn't stored.
final class BadIndex: PersistentModel {
    @Attribute var name: String = ""
    var computed: String { name.uppercased() }
    static var constraints: [ModelConstraint<BadIndex>] { [.index(\.computed)] }

    let persistentBackingData = BackingData()
    init() {}
}

/// A model with a compound unique constraint, an index and a deny rule.
final class Author: PersistentModel {
    @Attribute var first: String = ""
    @Attribute var last: String = ""
    @Attribute(.unique) var email: String = ""
    @Relationship(deleteRule: .deny, inverse: \Book.author) var books: [Book] = []
    static var constraints: [ModelConstraint<Author>] { [.unique(\.first, \.last), .index(\.last)] }

    let persistentBackingData = BackingData()
    init() {}
    convenience init(_ first: String, _ last: String, email: String) {
        self.init()
        self.first = first
        self.last = last
        self.email = email
    }
}

final class Book: PersistentModel {
    @Attribute var title: String = ""
    @Relationship var author: Author?
    @Relationship(maximumModelCount: 2) var related: [Book] = []

    let persistentBackingData = BackingData()
    init() {}
    convenience init(_ title: String, author: Author? = nil) {
        self.init()
        self.title = title
        self.author = author
    }
}
