import Foundation
import ModelStore
import ModelStoreSync

/// Reads and checks the body of a sync request before anything is read from or written to the
/// store: the JSON of the path's message, its identifiers, its size limits, and that a push names
/// only the entities and properties the schema syncs, with values of their types. Every refusal is
/// a ``SyncRequestRefusal`` whose message quotes no stored value.
///
/// It has no HTTP dependency, so the fuzz target (`modelstore-sync-fuzz`) runs it alone.
public struct SyncRequestDecoder: Sendable {
    /// What a property holds, for checking pushed values.
    public enum PropertyKind: Sendable {
        /// An attribute of this type.
        case attribute(AttributeType)
        /// A to-one relationship.
        case toOne
        /// A to-many relationship.
        case toMany
    }

    /// The limits a request must keep.
    public struct Limits: Sendable {
        /// The most changes one push may carry.
        public var maximumChangesPerPush: Int
        /// The most global identifiers one fetch may name.
        public var maximumFetchIdentifiers: Int
        /// The longest replica name or global identifier accepted, in characters.
        public var maximumIdentifierLength: Int

        /// Limits.
        public init(maximumChangesPerPush: Int, maximumFetchIdentifiers: Int, maximumIdentifierLength: Int) {
            self.maximumChangesPerPush = maximumChangesPerPush
            self.maximumFetchIdentifiers = maximumFetchIdentifiers
            self.maximumIdentifierLength = maximumIdentifierLength
        }
    }

    /// The limits.
    public let limits: Limits
    private let entities: [String: [String: PropertyKind]]

    /// A decoder for requests to a store of `schema` (whose sync entities it never lets a push name).
    public init(schema: Schema, limits: Limits) {
        self.limits = limits
        var entities: [String: [String: PropertyKind]] = [:]
        for entity in schema.entities where !SyncMetadata.isMetadata(entity.name) {
            var properties: [String: PropertyKind] = [:]
            for attribute in entity.attributes { properties[attribute.name] = .attribute(attribute.valueType) }
            for relationship in entity.relationships {
                properties[relationship.name] = relationship.isToOne ? .toOne : .toMany
            }
            entities[entity.name] = properties
        }
        self.entities = entities
    }

    /// The properties of a synced entity, or `nil` when the schema syncs no entity of that name.
    public func entityProperties(_ entity: String) -> [String: PropertyKind]? { entities[entity] }

    // MARK: Decoding

    /// The message of type `Message` in `body`, a request to `path`; a body that is not one is
    /// refused with 400 and a message naming where it went wrong.
    ///
    /// A push that says it carries more than ``Limits/maximumChangesPerPush`` changes (the count
    /// at the start of its packed blob, or the length of its JSON array) is refused (413, as
    /// ``validate(_:)-(SyncPushRequest)`` refuses it) before they are decoded: an 8 MiB blob holds
    /// hundreds of thousands of changes (``ModelStoreSync/SyncPushRequest/maximumChangesKey``).
    public func decode<Message: Decodable>(_ body: Data, as type: Message.Type, path: String) throws -> Message {
        let decoder = JSONDecoder()
        decoder.userInfo[SyncPushRequest.maximumChangesKey] = limits.maximumChangesPerPush
        do {
            return try decoder.decode(Message.self, from: body)
        } catch let error as SyncPushRequest.TooManyChanges {
            throw tooManyChanges(error.count)
        } catch let DecodingError.keyNotFound(key, context) {
            throw SyncRequestRefusal.malformed(path, "no '\(Self.quoted(key.stringValue))' at '\(Self.path(context))'")
        } catch let DecodingError.typeMismatch(type, context) {
            throw SyncRequestRefusal.malformed(path, "'\(Self.path(context))' is not \(type)")
        } catch let DecodingError.valueNotFound(type, context) {
            throw SyncRequestRefusal.malformed(path, "'\(Self.path(context))' is null where \(type) is needed")
        } catch let DecodingError.dataCorrupted(context) where !context.codingPath.isEmpty {
            throw SyncRequestRefusal.malformed(path, "'\(Self.path(context))' holds a value of the wrong form")
        } catch {
            throw SyncRequestRefusal.malformed(path, "it is not JSON")
        }
    }

    /// Whether `body` holds a push's changes in the packed form: a `packedChanges` key (the name in
    /// quotes, then a colon), which the push's decoding reads in place of the `changes` array. For
    /// the server's log and its switch; a scan of the bytes, without a second parse.
    public static func isPacked(_ body: Data) -> Bool {
        var start = body.startIndex
        while let found = body.range(of: packedKey, in: start..<body.endIndex) {
            var next = found.upperBound
            while next < body.endIndex, [0x20, 0x09, 0x0A, 0x0D].contains(body[next]) { next += 1 }
            if next < body.endIndex, body[next] == UInt8(ascii: ":") { return true }
            start = found.upperBound
        }
        return false
    }

    private static let packedKey = Data(#""packedChanges""#.utf8)

    /// A coding path as `.changes[3].values`, each key cut short and without control characters.
    private static func path(_ context: DecodingError.Context) -> String {
        let path = context.codingPath.map { $0.intValue.map { "[\($0)]" } ?? ".\(quoted($0.stringValue))" }
        return path.count > 12 ? path.prefix(12).joined() + "…" : path.joined()
    }

    // MARK: Checking

    /// Checks a hello's replica name.
    public func validate(_ hello: SyncHello) throws {
        try validateIdentifier(hello.replica, "replica", path: "hello")
    }

    /// Checks a pull's replica name.
    public func validate(_ pull: SyncPullRequest) throws {
        try validateIdentifier(pull.replica, "replica", path: "pull")
    }

    /// Checks a fetch's size and identifiers.
    public func validate(_ fetch: SyncFetchRequest) throws {
        guard fetch.globalIDs.count <= limits.maximumFetchIdentifiers else {
            throw SyncRequestRefusal(
                status: 413, code: "tooLarge",
                "the fetch names \(fetch.globalIDs.count) models, more than the "
                    + "\(limits.maximumFetchIdentifiers) allowed",
                remedy: "Fetch in smaller batches")
        }
        for id in fetch.globalIDs { try validateIdentifier(id, "global identifier", path: "fetch") }
    }

    /// Checks a push against the limits and the schema: its size, its identifiers (its pull's too),
    /// and that every
    /// change names a synced entity and that entity's properties (never the sync engine's own
    /// entities), with values of their types.
    public func validate(_ push: SyncPushRequest) throws {
        try validateIdentifier(push.replica, "replica", path: "push")
        if let pull = push.pull { try validateIdentifier(pull.replica, "pull's replica", path: "push") }
        guard push.changes.count <= limits.maximumChangesPerPush else { throw tooManyChanges(push.changes.count) }
        for (index, change) in push.changes.enumerated() {
            try validateIdentifier(change.globalID, "global identifier", path: "push")
            try validateIdentifier(change.stamp.replica, "stamp's replica", path: "push", allowEmpty: true)
            guard let properties = entityProperties(change.entity) else {
                throw SyncRequestRefusal(
                    status: 422, code: "unknownEntity",
                    "change \(index) of the push names the entity '\(Self.quoted(change.entity))', "
                        + "which the server's schema does not sync",
                    remedy: "Push only the entities of the server's schema; nothing was stored")
            }
            for name in Set(change.values.keys).union(change.base.keys) where properties[name] == nil {
                throw SyncRequestRefusal(
                    status: 422, code: "unknownProperty",
                    "change \(index) of the push names the property '\(Self.quoted(name))', which the entity "
                        + "'\(change.entity)' does not have",
                    remedy: "Push only the properties of the server's schema; nothing was stored")
            }
            for (name, value) in change.values where properties[name].map({ !Self.fits(value, $0) }) ?? false {
                throw SyncRequestRefusal(
                    status: 422, code: "wrongType",
                    "change \(index) of the push gives the property '\(name)' of '\(change.entity)' a value "
                        + "of the wrong kind ('\(value.kindName)' where \(properties[name].map(Self.expected) ?? "") is stored)",
                    remedy: "Push values of the schema's types; nothing was stored")
            }
        }
    }

    /// Whether a pushed value can be stored in a property of this kind. Scalar attributes are
    /// checked exactly; collections, enumerations and composites are left to the store.
    public static func fits(_ value: StoreValue, _ kind: PropertyKind) -> Bool {
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

    /// The refusal of a push of `count` changes, more than ``Limits/maximumChangesPerPush``.
    private func tooManyChanges(_ count: Int) -> SyncRequestRefusal {
        SyncRequestRefusal(
            status: 413, code: "tooLarge",
            "the push carries \(count) changes, more than the \(limits.maximumChangesPerPush) allowed",
            remedy: "Push in smaller batches; nothing was stored")
    }

    /// Checks that an identifier is not empty, not too long, and has no control characters.
    public func validateIdentifier(_ value: String, _ what: String, path: String, allowEmpty: Bool = false) throws {
        let limit = limits.maximumIdentifierLength
        if value.isEmpty && !allowEmpty {
            throw SyncRequestRefusal.malformed(path, "the \(what) is empty")
        }
        if value.count > limit {
            throw SyncRequestRefusal.malformed(path, "a \(what) is longer than \(limit) characters")
        }
        if value.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) {
            throw SyncRequestRefusal.malformed(path, "a \(what) contains control characters")
        }
    }

    /// A name from a request, cut short and without control characters, for a message.
    public static func quoted(_ name: String) -> String {
        let clean = String(name.unicodeScalars.filter { $0.properties.generalCategory != .control }.map(Character.init))
        return clean.count > 60 ? String(clean.prefix(60)) + "…" : clean
    }
}

/// A request the server refuses before it reaches the store: an HTTP status (4xx), a code a client
/// can match, what failed and how to fix it. It never quotes a token or a stored value.
public struct SyncRequestRefusal: Error, Sendable, CustomStringConvertible {
    /// The HTTP status, from 400 to 499.
    public var status: Int
    /// A code a client can match: `badRequest`, `tooLarge`, `unknownEntity`, …
    public var code: String
    /// What failed, on what.
    public var message: String
    /// What to do about it.
    public var remedy: String?

    /// A refusal.
    public init(status: Int, code: String, _ message: String, remedy: String? = nil) {
        self.status = status
        self.code = code
        self.message = message
        self.remedy = remedy
    }

    /// `status code: message`.
    public var description: String { "\(status) \(code): \(message)" }

    /// The body is not the message the path takes.
    public static func malformed(_ path: String, _ detail: String) -> SyncRequestRefusal {
        SyncRequestRefusal(
            status: 400, code: "badRequest", "the '\(path)' request's body is not a valid sync message: \(detail)",
            remedy: "Send the JSON a ModelStore sync client of this version sends; nothing was stored")
    }
}
