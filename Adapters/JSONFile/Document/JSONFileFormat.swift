import Foundation
import ModelStore
import ModelStoreAdapterKit

/// The constants of the document format (see `FORMAT.md`).
enum JSONFileFormat {
    /// The value of the header's `format` key.
    static let name = "ModelStore.JSONFile"
    /// The format version this code writes and the newest it reads.
    static let version = 1
    /// The key of a record's primary key.
    static let identifierKey = "$id"
}

/// A property value kept in a file beside the document: which record, which property.
struct ExternalSlot: Hashable, Sendable {
    var id: PersistentIdentifier
    var slot: Int
}

/// Records of an entity the schema does not have, kept byte for byte so a store opened with a
/// smaller schema never drops another app's data.
struct PreservedEntity: Sendable {
    var name: String
    /// The entity's shape object from the header, if the header had one.
    var shape: [UInt8]?
    /// The entity's records array.
    var records: [UInt8]
}

/// What the header of a document says.
struct DocumentHeader: Sendable {
    var formatVersion: Int?
    /// The checksum the header records, and where its contents are in the file.
    var checksum: (value: UInt32, contents: Range<Int>)?
    var schemaVersion: Schema.Version?
    var storeIdentifier: String?
    var nextPrimaryKey: Int64?
    /// The property names the header lists for each entity.
    var propertyNames: [String: Set<String>]?
    /// The header's `entities` array as written: ``Schema/EntityDescription`` values.
    var entitiesJSON: [UInt8]?
    /// The document's `history` object as written, if it has one.
    var historyJSON: [UInt8]?
}

/// A document read from bytes: its header, its models and what else must survive the next save.
struct DecodedDocument: Sendable {
    var header: DocumentHeader
    /// The records, loaded (the keys the header reserves are not applied yet).
    var table: SnapshotTable
    var preserved: [PreservedEntity]
    /// The external file each externally stored value came from.
    var externalFiles: [ExternalSlot: String]
}
