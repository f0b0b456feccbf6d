import Foundation
import ModelStore

/// A level stored by its raw value.
enum QueryLevel: String, Codable, Sendable, CaseIterable {
    case low, mid, high
}

/// A model with an attribute of every storable kind, for the query corpus.
final class Reading: PersistentModel {
    @Attribute(.unique) var code: String = ""
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
    @Attribute var text: String = ""
    @Attribute var date: Date = Date(timeIntervalSinceReferenceDate: 0)
    @Attribute var data: Data = Data()
    @Attribute var uuid: UUID = UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))
    @Attribute var url: URL = URL(string: "https://example.com")!
    @Attribute var note: String? = nil
    @Attribute var score: Double? = nil
    @Attribute var count: Int? = nil
    @Attribute var level: QueryLevel = .mid
    @Attribute var optionalLevel: QueryLevel? = nil
    @Relationship(inverse: \Station.readings) var station: Station?
    @Relationship(deleteRule: .cascade, inverse: \Tag.reading) var tags: [Tag] = []
    /// Not persisted: predicates may not use it.
    var scratch = 0
    /// Computed: predicates may not use it.
    var shout: String { text.uppercased() }

    static var constraints: [ModelConstraint<Reading>] {
        [.index(\.int), .index(\.text), .index(\.double), .index(\.level)]
    }

    let persistentBackingData = BackingData()
    init() {}
}

/// The to-one side of ``Reading``.
final class Station: PersistentModel {
    @Attribute var name: String = ""
    @Attribute var elevation: Int = 0
    @Attribute var region: String? = nil
    @Relationship var readings: [Reading] = []

    let persistentBackingData = BackingData()
    init() {}
    convenience init(_ name: String, elevation: Int, region: String? = nil) {
        self.init()
        self.name = name
        self.elevation = elevation
        self.region = region
    }
}

/// The to-many side of ``Reading``.
final class Tag: PersistentModel {
    @Attribute var label: String = ""
    @Attribute var weight: Int = 0
    @Relationship var reading: Reading?

    let persistentBackingData = BackingData()
    init() {}
    convenience init(_ label: String, weight: Int) {
        self.init()
        self.label = label
        self.weight = weight
    }
}

/// A model without relationships, so batch deletes and updates reach the store's batch operations.
final class Sensor: PersistentModel {
    @Attribute(.unique) var serial: String = ""
    @Attribute var value: Double = 0
    @Attribute var rank: Int? = nil
    @Attribute var label: String = ""

    let persistentBackingData = BackingData()
    init() {}
    convenience init(_ serial: String, value: Double, rank: Int?, label: String) {
        self.init()
        self.serial = serial
        self.value = value
        self.rank = rank
        self.label = label
    }
}
