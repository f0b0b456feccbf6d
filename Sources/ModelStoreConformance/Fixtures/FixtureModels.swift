import Foundation
import ModelStore

// The fixture graph every case stores:
//
//   Cabinet ──cascade──▶ [Folder] ──cascade──▶ [Note] ──nullify──▶ [Remark]
//                          │  │                   └──noAction──▶ Specimen?
//                          │  └──deny─────▶ [Hold]
//                          └────nullify───▶ [Specimen] ──▶ Specimen? (peer: self-reference)
//   LogEntry (no relationships: the store's own batch delete path)
//
// Deleting a cabinet walks three levels with mixed rules on one path: its folders go (cascade), their
// notes go (cascade), the notes' remarks stay with `note` cleared (nullify), the folders' specimens stay
// with `folder` cleared (nullify), and a hold on any of the folders refuses the whole save (deny).

/// What a specimen is: a `String`-backed enum.
enum SpecimenKind: String, Codable, Sendable, CaseIterable {
    case mineral, plant, animal, artifact
}

/// How good a specimen is: an `Int`-backed enum, stored optionally.
enum SpecimenGrade: Int, Codable, Sendable, CaseIterable {
    case low = 1
    case medium = 2
    case high = 3
}

/// Where a specimen was found: a `Codable` struct, stored as a composite.
struct SpecimenOrigin: Codable, Hashable, Sendable {
    var latitude: Double
    var longitude: Double
    var label: String
}

/// Every supported attribute type, a unique attribute, a compound uniqueness constraint, a to-one
/// relationship with an inverse and a self-reference without one.
final class Specimen: PersistentModel {
    @Attribute(.unique) var code: String = ""
    @Attribute var series: String = ""
    @Attribute var serial: Int = 0
    @Attribute var isActive: Bool = false
    @Attribute var count: Int = 0
    @Attribute var tiny: Int8 = 0
    @Attribute var small: Int16 = 0
    @Attribute var medium: Int32 = 0
    @Attribute var large: Int64 = 0
    @Attribute var unsigned: UInt = 0
    @Attribute var byte: UInt8 = 0
    @Attribute var word: UInt16 = 0
    @Attribute var doubleWord: UInt32 = 0
    @Attribute var quadWord: UInt64 = 0
    @Attribute var weight: Double = 0
    @Attribute var ratio: Float = 0
    @Attribute var price: Decimal = 0
    @Attribute var title: String = ""
    @Attribute var createdAt: Date = Date(timeIntervalSinceReferenceDate: 0)
    @Attribute var payload: Data = Data()
    @Attribute var token: UUID = UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))
    @Attribute var homepage: URL = URL(string: "https://example.com/")!
    @Attribute var nickname: String? = nil
    @Attribute var rank: Int? = nil
    @Attribute var reviewedAt: Date? = nil
    @Attribute var tags: [String] = []
    @Attribute var measurements: [String: Double] = [:]
    @Attribute var labelsByNumber: [Int: String] = [:]
    @Attribute var kind: SpecimenKind = .mineral
    @Attribute var grade: SpecimenGrade? = nil
    @Attribute var origin: SpecimenOrigin = SpecimenOrigin(latitude: 0, longitude: 0, label: "")
    @Attribute(.externalStorage) var attachment: Data = Data()
    @Relationship var folder: Folder?
    @Relationship var peer: Specimen?

    static var constraints: [ModelConstraint<Specimen>] { [.unique(\.series, \.serial), .index(\.count)] }

    let persistentBackingData = BackingData()
    init() {}
}

/// The top of the deepest chain: deleting a cabinet cascades to its folders, and from them on.
final class Cabinet: PersistentModel {
    @Attribute(.unique) var label: String = ""
    @Relationship(deleteRule: .cascade, inverse: \Folder.cabinet) var folders: [Folder] = []

    let persistentBackingData = BackingData()
    init() {}
}

/// A container of specimens and notes: cascade to notes, nullify to specimens, deny while held.
final class Folder: PersistentModel {
    @Attribute(.unique) var name: String = ""
    @Attribute var position: Int = 0
    @Relationship var cabinet: Cabinet?
    @Relationship(deleteRule: .cascade, inverse: \Note.folder) var notes: [Note] = []
    @Relationship(deleteRule: .nullify, inverse: \Specimen.folder) var specimens: [Specimen] = []
    @Relationship(deleteRule: .deny, inverse: \Hold.folder) var holds: [Hold] = []

    let persistentBackingData = BackingData()
    init() {}
}

/// A note in a folder, about a specimen (`.noAction`: deleting the note leaves the specimen alone).
/// Deleting a note keeps its remarks and clears their `note` (`.nullify`).
final class Note: PersistentModel {
    @Attribute var text: String = ""
    @Attribute var order: Int = 0
    @Relationship var folder: Folder?
    @Relationship(deleteRule: .noAction) var subject: Specimen?
    @Relationship(deleteRule: .nullify, inverse: \Remark.note) var remarks: [Remark] = []

    let persistentBackingData = BackingData()
    init() {}
}

/// A legal hold: while a folder has one, the folder cannot be deleted (`.deny`).
final class Hold: PersistentModel {
    @Attribute var reason: String = ""
    @Relationship var folder: Folder?

    let persistentBackingData = BackingData()
    init() {}
}

/// A remark on a note: the third level of the cabinet chain, kept when its note goes.
final class Remark: PersistentModel {
    @Attribute var text: String = ""
    @Relationship var note: Note?

    let persistentBackingData = BackingData()
    init() {}
}

/// A flat record with no relationships, so batch deletes reach the store's own batch path. Its label
/// is kept in history tombstones.
final class LogEntry: PersistentModel {
    @Attribute(.unique) var sequence: Int = 0
    @Attribute(.preserveValueOnDeletion) var label: String = ""
    @Attribute var bucket: Int = 0

    let persistentBackingData = BackingData()
    init() {}
}

/// The fixture schema and model types.
enum Fixtures {
    static let types: [any PersistentModel.Type] = [
        Specimen.self, Folder.self, Note.self, Hold.self, LogEntry.self, Cabinet.self, Remark.self,
    ]
    static let schema = Schema(types)
}
