import Foundation
import ModelStore
import ModelStoreSync

extension SyncServer {
    /// Checks a hello's replica name.
    func validate(_ hello: SyncHello) throws {
        try validateIdentifier(hello.replica, "replica", path: "hello")
    }

    /// Checks a push against the limits and the schema before anything is read or stored: its size,
    /// its identifiers, and that every change names a synced entity and that entity's properties
    /// (never the sync engine's own entities).
    func validate(_ push: SyncPushRequest) throws {
        try validateIdentifier(push.replica, "replica", path: "push")
        guard push.changes.count <= configuration.maximumChangesPerPush else {
            throw SyncServerFailure.tooLarge(
                "the push carries \(push.changes.count) changes, more than the "
                    + "\(configuration.maximumChangesPerPush) allowed",
                remedy: "Push in smaller batches; nothing was stored")
        }
        for (index, change) in push.changes.enumerated() {
            try validateIdentifier(change.globalID, "global identifier", path: "push")
            try validateIdentifier(change.stamp.replica, "stamp's replica", path: "push", allowEmpty: true)
            guard let properties = entityProperties(change.entity) else {
                throw SyncServerFailure(
                    .unprocessableContent, code: "unknownEntity",
                    "change \(index) of the push names the entity '\(Self.quoted(change.entity))', "
                        + "which the server's schema does not sync",
                    remedy: "Push only the entities of the server's schema; nothing was stored")
            }
            for name in Set(change.values.keys).union(change.base.keys) where properties[name] == nil {
                throw SyncServerFailure(
                    .unprocessableContent, code: "unknownProperty",
                    "change \(index) of the push names the property '\(Self.quoted(name))', which the entity "
                        + "'\(change.entity)' does not have",
                    remedy: "Push only the properties of the server's schema; nothing was stored")
            }
            for (name, value) in change.values where properties[name].map({ !Self.fits(value, $0) }) ?? false {
                throw SyncServerFailure(
                    .unprocessableContent, code: "wrongType",
                    "change \(index) of the push gives the property '\(name)' of '\(change.entity)' a value "
                        + "of the wrong kind ('\(value.kindName)' where \(properties[name].map(Self.expected) ?? "") is stored)",
                    remedy: "Push values of the schema's types; nothing was stored")
            }
        }
    }

    /// Whether a pushed value can be stored in a property of this kind. Scalar attributes are
    /// checked exactly; collections, enumerations and composites are left to the store.
    static func fits(_ value: StoreValue, _ kind: PropertyKind) -> Bool {
        switch kind {
        case .toOne: return value.isNull || value.kindName == "reference"
        case .toMany: return value.kindName == "references"
        case .attribute(let type): return fits(value, type)
        }
    }

    private static func fits(_ value: StoreValue, _ type: AttributeType) -> Bool {
        let kind = value.kindName
        switch type {
        case .optional(let wrapped): return value.isNull || fits(value, wrapped)
        case .bool: return kind == "bool"
        case .integer: return kind == "int" || kind == "uint"
        case .double, .float: return kind == "double" || kind == "int"
        case .decimal: return kind == "decimal"
        case .string: return kind == "string"
        case .date: return kind == "date"
        case .data: return kind == "data"
        case .uuid: return kind == "uuid"
        case .url: return kind == "url"
        case .array, .dictionary, .enumeration, .composite: return true
        }
    }

    private static func expected(_ kind: PropertyKind) -> String {
        switch kind {
        case .toOne: return "a reference"
        case .toMany: return "references"
        case .attribute(let type): return "'\(type)'"
        }
    }

    /// Checks that an identifier is not empty, not too long, and has no control characters.
    func validateIdentifier(_ value: String, _ what: String, path: String, allowEmpty: Bool = false) throws {
        let limit = configuration.maximumIdentifierLength
        if value.isEmpty && !allowEmpty {
            throw SyncServerFailure.malformed(path, "the \(what) is empty")
        }
        if value.count > limit {
            throw SyncServerFailure.malformed(path, "a \(what) is longer than \(limit) characters")
        }
        if value.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) {
            throw SyncServerFailure.malformed(path, "a \(what) contains control characters")
        }
    }

    /// A name from a request, cut short and without control characters, for a message.
    static func quoted(_ name: String) -> String {
        let clean = String(name.unicodeScalars.filter { $0.properties.generalCategory != .control }.map(Character.init))
        return clean.count > 60 ? String(clean.prefix(60)) + "…" : clean
    }
}
