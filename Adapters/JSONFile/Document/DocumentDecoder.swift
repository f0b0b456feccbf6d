import Foundation
import ModelStore
import ModelStoreAdapterKit
import ModelStoreFileIO

/// Reads a whole document into a table, checking it against the schema as it goes.
///
/// Records are read straight from the bytes into the table's columns, one pass, no tree and no
/// snapshot per record. Every problem in the text is a ``JSONReadError`` with the byte offset where
/// it is; a problem the table finds (a repeated identifier, a unique value claimed twice) is its
/// ``DataStoreError``.
struct DocumentDecoder {
    let schema: Schema
    let limits: JSONReadLimits
    /// The identifier to use when the header has none (a file written by hand).
    let fallbackStoreIdentifier: String
    /// Loads the bytes of an external file by name; throws a message-only ``JSONReadError`` (offset ignored).
    let loadExternalFile: (String) throws -> Data

    /// Reads a document; with `headerOnly`, reads only the header and skips the records.
    func decode(_ bytes: UnsafeBufferPointer<UInt8>, headerOnly: Bool = false) throws -> DecodedDocument {
        var scanner = JSONScanner(bytes, limits: limits)
        var state = State(schema: schema)
        if scanner.isAtEnd() {
            throw scanner.failure(
                "the file is empty",
                remedy: "Restore the file from its '.backup' copy, or delete it to start an empty store")
        }
        guard try scanner.peek() == UInt8(ascii: "{") else {
            throw scanner.failure("the file is not a ModelStore JSON document: it does not start with '{'")
        }
        try scanner.enterObject()
        var first = true
        var deferredRecords: Int?
        var seenKeys: Set<String> = []
        while let key = try scanner.nextKey(&first) {
            let name = try scanner.string(of: key)
            guard seenKeys.insert(name).inserted else {
                throw scanner.failure("the document has the key '\(name)' twice", at: key.start - 1)
            }
            switch name {
            case "format":
                scanner.skipWhitespace()
                let start = scanner.offset
                let format = try scanner.readString()
                guard format == JSONFileFormat.name else {
                    throw scanner.failure("the file's 'format' is '\(format)', not '\(JSONFileFormat.name)'", at: start)
                }
            case "formatVersion":
                scanner.skipWhitespace()
                let start = scanner.offset
                let version = try scanner.readInt64()
                if let refusal = FormatVersion.refusal(found: version, readable: 1...JSONFileFormat.version) {
                    var error = scanner.failure(refusal.reason, at: start, remedy: refusal.remedy)
                    error.code = refusal.code
                    throw error
                }
                state.header.formatVersion = Int(version)
            case DocumentChecksum.key:
                scanner.skipWhitespace()
                let start = scanner.offset
                let text = try scanner.readString()
                guard let value = DocumentChecksum.parse(text) else {
                    throw scanner.failure(
                        "the '\(DocumentChecksum.key)' is not 'crc32c:' followed by 8 hexadecimal digits", at: start,
                        remedy: "Remove the 'checksum' line, or run 'modelstore seal' to write it again")
                }
                state.header.checksum = (value, (start + 1)..<(scanner.offset - 1))
            case "schemaVersion":
                scanner.skipWhitespace()
                let start = scanner.offset
                let text = try scanner.readString()
                guard let version = Self.version(text) else {
                    throw scanner.failure(
                        "the 'schemaVersion' '\(text)' is not of the form 'major.minor.patch'", at: start)
                }
                state.header.schemaVersion = version
            case "storeIdentifier":
                scanner.skipWhitespace()
                let start = scanner.offset
                let identifier = try scanner.readString()
                guard !identifier.isEmpty else { throw scanner.failure("the 'storeIdentifier' is empty", at: start) }
                state.header.storeIdentifier = identifier
            case "nextPrimaryKey":
                state.header.nextPrimaryKey = try scanner.readInt64()
            case "entities":
                scanner.skipWhitespace()
                let start = scanner.offset
                try readShapes(&scanner, &state)
                state.header.entitiesJSON = Array(UnsafeBufferPointer(rebasing: scanner.input[start..<scanner.offset]))
            case "records":
                if headerOnly {
                    try scanner.skipValue()
                } else if state.header.formatVersion == nil || state.header.storeIdentifier == nil
                    || state.header.propertyNames == nil
                {
                    // Read records once the header is known, wherever it is in the file.
                    deferredRecords = scanner.offset
                    try scanner.skipValue()
                } else {
                    try readRecords(&scanner, &state)
                }
            case JSONFileHistory.key:
                scanner.skipWhitespace()
                let start = scanner.offset
                try scanner.skipValue()
                state.header.historyJSON = Array(UnsafeBufferPointer(rebasing: scanner.input[start..<scanner.offset]))
            default:
                try scanner.skipValue()
            }
        }
        guard scanner.isAtEnd() else {
            throw scanner.failure(
                "there is more text after the end of the document",
                remedy: "Remove everything after the final '}'")
        }
        guard state.header.formatVersion != nil else {
            throw scanner.failure(
                "the file is not a ModelStore JSON document: it has no 'formatVersion'", at: 0,
                remedy: "Add \"formatVersion\": \(JSONFileFormat.version) to the top-level object")
        }
        if headerOnly {
            return DecodedDocument(
                header: state.header, table: SnapshotTable(schema: schema), preserved: [], externalFiles: [:])
        }
        if let deferredRecords {
            scanner.offset = deferredRecords
            scanner.depth = 1
            try readRecords(&scanner, &state)
        }
        for name in state.shapes.keys.sorted()
        where schema.entity(named: name) == nil && !state.preservedNames.contains(name) {
            state.preserved.append(PreservedEntity(name: name, shape: state.shapes[name], records: Array("[]".utf8)))
        }
        try checkReferences(scanner, state)
        state.header.storeIdentifier = state.header.storeIdentifier ?? fallbackStoreIdentifier
        return DecodedDocument(
            header: state.header, table: state.table, preserved: state.preserved,
            externalFiles: state.externalFiles)
    }

    static func version(_ text: String) -> Schema.Version? {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false).map { Int($0) }
        guard parts.count == 3, let major = parts[0], let minor = parts[1], let patch = parts[2] else { return nil }
        return Schema.Version(major, minor, patch)
    }

    /// What is built up while reading.
    private struct State {
        var header = DocumentHeader()
        var shapes: [String: [UInt8]] = [:]
        var table: SnapshotTable
        /// The references into this store that records hold, checked once every record is read.
        var references: [PendingReference] = []
        var keys: [String: EntityKeys] = [:]
        var preserved: [PreservedEntity] = []
        var preservedNames: Set<String> = []
        var externalFiles: [ExternalSlot: String] = [:]
        var storeIdentifier = ""

        init(schema: Schema) { table = SnapshotTable(schema: schema) }
    }

    /// A reference a record holds to a model of this store, with where the record is.
    private struct PendingReference {
        let source: PersistentIdentifier
        let relationship: Schema.Relationship
        let target: PersistentIdentifier
        let recordOffset: Int
    }

    // MARK: Header

    private func readShapes(_ scanner: inout JSONScanner, _ state: inout State) throws {
        var names: [String: Set<String>] = [:]
        try scanner.enterArray()
        var first = true
        while try scanner.nextElement(&first) {
            scanner.skipWhitespace()
            let start = scanner.offset
            var name: String?
            var properties: Set<String> = []
            try scanner.enterObject()
            var firstKey = true
            while let key = try scanner.nextKey(&firstKey) {
                switch try scanner.string(of: key) {
                case "name": name = try scanner.readString()
                case "properties":
                    try scanner.enterArray()
                    var firstProperty = true
                    while try scanner.nextElement(&firstProperty) {
                        try scanner.enterObject()
                        var firstField = true
                        while let field = try scanner.nextKey(&firstField) {
                            if try scanner.string(of: field) == "name" {
                                properties.insert(try scanner.readString())
                            } else {
                                try scanner.skipValue()
                            }
                        }
                    }
                default: try scanner.skipValue()
                }
            }
            guard let name else { throw scanner.failure("an entity in the header has no 'name'", at: start) }
            guard names.updateValue(properties, forKey: name) == nil else {
                throw scanner.failure("the header describes the entity '\(name)' twice", at: start)
            }
            state.shapes[name] = Array(UnsafeBufferPointer(rebasing: scanner.input[start..<scanner.offset]))
        }
        state.header.propertyNames = names
    }

    // MARK: Records

    private func readRecords(_ scanner: inout JSONScanner, _ state: inout State) throws {
        state.storeIdentifier = state.header.storeIdentifier ?? fallbackStoreIdentifier
        let loader = ExternalLoader(load: loadExternalFile)
        let context = ValueContext(storeIdentifier: state.storeIdentifier) { name, offset in
            try loader.load(name, at: offset)
        }
        var seenEntities: Set<String> = []
        try scanner.enterObject()
        var first = true
        while let key = try scanner.nextKey(&first) {
            let name = try scanner.string(of: key)
            guard seenEntities.insert(name).inserted else {
                throw scanner.failure("the records of '\(name)' appear twice", at: key.start - 1)
            }
            if let entity = schema.entity(named: name) {
                let reader = EntityReader(entity: entity, droppedNames: droppedNames(of: entity, state.header))
                try readEntity(reader, &scanner, &state, context, loader)
            } else if state.header.propertyNames?[name] != nil {
                scanner.skipWhitespace()
                let start = scanner.offset
                guard try scanner.peekKind() == .array else {
                    throw scanner.failure("the records of '\(name)' must be an array", at: start)
                }
                try scanner.skipValue()
                state.preserved.append(
                    PreservedEntity(
                        name: name, shape: state.shapes[name],
                        records: Array(UnsafeBufferPointer(rebasing: scanner.input[start..<scanner.offset]))))
                state.preservedNames.insert(name)
            } else {
                throw scanner.failure(
                    "the file has records of '\(name)', an entity that neither the schema nor the file's header "
                        + "declares",
                    at: key.start - 1, remedy: "Add the model type '\(name)' to the container, or fix the entity name")
            }
        }
    }

    /// Properties the header lists but the schema no longer has: dropped on read (lightweight migration).
    private func droppedNames(of entity: Schema.Entity, _ header: DocumentHeader) -> Set<String> {
        guard let listed = header.propertyNames?[entity.name] else { return [] }
        return listed.filter { entity.slot(of: $0) == nil }
    }

    private func readEntity(
        _ reader: EntityReader, _ scanner: inout JSONScanner, _ state: inout State, _ context: ValueContext,
        _ loader: ExternalLoader
    ) throws {
        let entity = reader.entity
        scanner.skipWhitespace()
        guard try scanner.peekKind() == .array else {
            throw scanner.failure("the records of '\(entity.name)' must be an array", at: scanner.offset)
        }
        var keys = state.keys[entity.name] ?? EntityKeys()
        defer { state.keys[entity.name] = keys }
        let storeIdentifier = state.storeIdentifier
        var references = state.references
        state.references = []
        defer { state.references = references }
        var externalFiles = state.externalFiles
        state.externalFiles = [:]
        defer { state.externalFiles = externalFiles }
        // Room for as many rows as keys were minted (a store of one entity that never deleted has
        // exactly that many), never more than the text could hold, shared among the entities (a
        // larger share than guessed grows as an array does).
        let mintedKeys = Int(clamping: max(0, (state.header.nextPrimaryKey ?? 1) - 1))
        let expectedCount = min(mintedKeys, scanner.input.count / 12) / max(1, schema.entities.count)
        try state.table.loadRows(of: entity.name, expectedCount: expectedCount) { rows in
            try readRecords(
                of: reader, &scanner, into: &rows, keys: &keys, references: &references, externalFiles: &externalFiles,
                storeIdentifier: storeIdentifier, context, loader)
        }
    }

    private func readRecords(
        of reader: EntityReader, _ scanner: inout JSONScanner, into rows: inout SnapshotTable.LoadingRows,
        keys: inout EntityKeys, references: inout [PendingReference], externalFiles: inout [ExternalSlot: String],
        storeIdentifier: String, _ context: ValueContext, _ loader: ExternalLoader
    ) throws {
        let entity = reader.entity
        var seen = [Int](repeating: -1, count: reader.shapes.count)
        var recordNumber = 0
        let identifierKey = Array(JSONFileFormat.identifierKey.utf8)
        // What ModelStore writes before a record's identifier, and before each property's value, in
        // one buffer for the whole read: reading them from arrays of arrays would retain and release
        // an inner array for every key.
        // Both layouts: as a plaintext document is written (`{"$id": 1, "name": …`), and compact, as
        // a sealed one is (`{"$id":1,"name":…`).
        let spaced = FlatLiterals(
            identifier: Array("\"\(JSONFileFormat.identifierKey)\": ".utf8), reader.literals(compact: false),
            keyOffset: 3)
        let compact = FlatLiterals(
            identifier: Array("\"\(JSONFileFormat.identifierKey)\":".utf8), reader.literals(compact: true),
            keyOffset: 2)
        defer {
            spaced.deallocate()
            compact.deallocate()
        }
        // Made once: every record's identifier shares it.
        let scope = PersistentIdentifier.Scope(storeIdentifier: storeIdentifier, entityName: entity.name)
        // One array of values for every record (the table copies the values into its columns): each
        // record overwrites the slots it lists, and the others are set to their defaults.
        var values = reader.defaults
        try scanner.enterArray()
        var first = true
        while try scanner.nextElement(&first) {
            scanner.skipWhitespace()
            let recordStart = scanner.offset
            guard try scanner.peekKind() == .object else {
                throw scanner.failure("a '\(entity.name)' record must be an object", at: recordStart)
            }
            try scanner.enterObject()
            var primaryKey: PrimaryKey?
            var expected = 0
            var seenCount = 0
            var externalNames: [(slot: Int, name: String)] = []
            var firstKey = true
            // Text as ModelStore writes it (`{"$id": 1, "name": …`, or compact) is read on a fast path:
            // each key the record lists in slot order is one comparison with its literal, in the
            // layout of the record's identifier. Anything else (other spacing, keys out of order,
            // escapes) goes through the general path below, key by key.
            var literals = spaced
            if scanner.consume(literal: spaced.identifier) {
                primaryKey = try readPrimaryKey(&scanner, entity)
                firstKey = false
            } else if scanner.consume(literal: compact.identifier) {
                literals = compact
                primaryKey = try readPrimaryKey(&scanner, entity)
                firstKey = false
            }
            while true {
                let slot: Int
                // Where the key's text starts, for errors.
                let keyStart: Int
                if !firstKey, expected < literals.count, case let literal = literals[expected],
                    scanner.consume(literal: literal)
                {
                    slot = expected
                    keyStart = scanner.offset - literal.count + literals.keyOffset
                } else {
                    guard let key = try scanner.nextKey(&firstKey) else { break }
                    keyStart = key.start
                    if expected < reader.names.count
                        && reader.names[expected].withUnsafeBufferPointer({ scanner.matches(key, $0) })
                    {
                        slot = expected
                    } else if identifierKey.withUnsafeBufferPointer({ scanner.matches(key, $0) }) {
                        guard primaryKey == nil else {
                            throw scanner.failure("a '\(entity.name)' record has two '$id' keys", at: key.start - 1)
                        }
                        primaryKey = try readPrimaryKey(&scanner, entity)
                        continue
                    } else {
                        let name = try scanner.string(of: key)
                        if let found = reader.slots[name] {
                            slot = found
                        } else if reader.droppedNames.contains(name) {
                            try scanner.skipValue()
                            continue
                        } else {
                            throw scanner.failure(
                                "a '\(entity.name)' record has the property '\(name)', which '\(entity.name)' does "
                                    + "not have",
                                at: key.start - 1,
                                remedy:
                                    "Remove it, or add the property to the model (stored properties: "
                                    + "\(entity.properties.map { "'\($0.name)'" }.joined(separator: ", ")))"
                            )
                        }
                    }
                }
                if seen[slot] == recordNumber {
                    throw scanner.failure(
                        "a '\(entity.name)' record has the property '\(entity.properties[slot].name)' twice",
                        at: keyStart - 1)
                }
                seen[slot] = recordNumber
                seenCount += 1
                do {
                    if reader.isExternal[slot] {
                        loader.lastName = nil
                        values[slot] = try scanner.readValue(reader.shapes[slot], context, allowsFile: true)
                        if let name = loader.lastName { externalNames.append((slot, name)) }
                    } else {
                        values[slot] = try scanner.readValue(reader.shapes[slot], context)
                    }
                } catch var error as JSONReadError {
                    error.message = "'\(entity.name).\(entity.properties[slot].name)': " + error.message
                    throw error
                }
                expected = slot + 1
            }
            // A property the record leaves out takes its default (records usually list every one).
            if seenCount < values.count {
                for slot in values.indices where seen[slot] != recordNumber { values[slot] = reader.defaults[slot] }
            }
            guard let primaryKey else {
                throw scanner.failure(
                    "a '\(entity.name)' record has no '$id'", at: recordStart,
                    remedy: "Give every record a unique \"$id\" (an integer or a string)")
            }
            guard keys.insert(primaryKey) else {
                throw scanner.failure(
                    "two '\(entity.name)' records have the '$id' \(Self.quoted(primaryKey))", at: recordStart,
                    remedy: "Give every record of an entity a different '$id'")
            }
            let id: PersistentIdentifier =
                switch primaryKey {
                case .int(let int): scope.identifier(int)
                case .string(let string): scope.identifier(string)
                }
            for (slot, name) in externalNames { externalFiles[ExternalSlot(id: id, slot: slot)] = name }
            for relationship in entity.relationships {
                for target in values[relationship.slot].referencedIdentifiers
                where target.storeIdentifier == storeIdentifier {
                    references.append(
                        PendingReference(
                            source: id, relationship: relationship, target: target, recordOffset: recordStart))
                }
            }
            try rows.append(id, values)
            recordNumber += 1
        }
    }

    private func readPrimaryKey(_ scanner: inout JSONScanner, _ entity: Schema.Entity) throws -> PrimaryKey {
        scanner.skipWhitespace()
        let start = scanner.offset
        switch try scanner.peekKind() {
        case .number: return .int(try scanner.readInt64())
        case .string: return .string(try scanner.readString())
        default:
            throw scanner.failure("the '$id' of a '\(entity.name)' record must be an integer or a string", at: start)
        }
    }

    static func quoted(_ key: PrimaryKey) -> String {
        switch key {
        case .int(let int): String(int)
        case .string(let string): "'\(string)'"
        }
    }

    // MARK: References

    /// Every reference into this store must point to a record of the relationship's destination.
    private func checkReferences(_ scanner: JSONScanner, _ state: State) throws {
        for reference in state.references {
            let (source, relationship, id) = (reference.source, reference.relationship, reference.target)
            let description = "the '\(source.entityName)' record \(Self.quoted(source.primaryKey))"
            guard id.entityName == relationship.destination else {
                throw scanner.failure(
                    "\(description) refers through '\(relationship.name)' to a '\(id.entityName)', but "
                        + "'\(source.entityName).\(relationship.name)' holds '\(relationship.destination)' models",
                    at: reference.recordOffset)
            }
            guard state.keys[id.entityName]?.contains(id.primaryKey) == true else {
                throw scanner.failure(
                    "\(description) refers through '\(relationship.name)' to the '\(id.entityName)' "
                        + "\(Self.quoted(id.primaryKey)), which the file does not have (a dangling relationship)",
                    at: reference.recordOffset,
                    remedy:
                        "Remove the key from '\(relationship.name)', or restore the missing '\(id.entityName)' record"
                )
            }
        }
    }
}

/// The keys of one entity's records, for spotting duplicates and dangling references.
///
/// Files list records in key order, so integer keys usually arrive increasing: then a sorted
/// array is enough, and a hash set is built only if the order breaks.
private struct EntityKeys {
    private var sorted: [Int64] = []
    private var isSorted = true
    private var integers: Set<Int64> = []
    private var strings: Set<String> = []

    /// Adds a key; `false` if the entity already has it.
    mutating func insert(_ key: PrimaryKey) -> Bool {
        switch key {
        case .string(let string):
            return strings.insert(string).inserted
        case .int(let int):
            if isSorted {
                if sorted.last.map({ $0 < int }) ?? true {
                    sorted.append(int)
                    return true
                }
                isSorted = false
                integers = Set(sorted)
                sorted = []
            }
            return integers.insert(int).inserted
        }
    }

    func contains(_ key: PrimaryKey) -> Bool {
        switch key {
        case .string(let string):
            return strings.contains(string)
        case .int(let int):
            guard isSorted else { return integers.contains(int) }
            var low = 0
            var high = sorted.count
            while low < high {
                let middle = (low + high) / 2
                if sorted[middle] < int { low = middle + 1 } else { high = middle }
            }
            return low < sorted.count && sorted[low] == int
        }
    }
}

/// The literals a read's fast path compares records with, copied into one buffer it owns until
/// ``deallocate()``.
private struct FlatLiterals {
    private let bytes: UnsafeMutableBufferPointer<UInt8>
    /// Where each slot's literal starts in `bytes`, and after the last, where the identifier's starts.
    private let starts: [Int]
    /// The literal before a record's identifier.
    let identifier: UnsafeBufferPointer<UInt8>
    /// Where the key's text starts in a slot's literal (after `, "` or `,"`).
    let keyOffset: Int

    init(identifier: [UInt8], _ slots: [[UInt8]], keyOffset: Int) {
        self.keyOffset = keyOffset
        var starts = [0]
        for literal in slots { starts.append(starts[starts.count - 1] + literal.count) }
        bytes = .allocate(capacity: starts[starts.count - 1] + identifier.count)
        var end = bytes.initialize(fromContentsOf: slots.joined())
        end = bytes[end...].initialize(fromContentsOf: identifier)
        self.identifier = UnsafeBufferPointer(rebasing: bytes[starts[starts.count - 1]..<end])
        self.starts = starts
    }

    /// How many slots have a literal (empty for a name the writer would escape).
    var count: Int { starts.count - 1 }

    /// The literal of a slot.
    @inline(__always)
    subscript(slot: Int) -> UnsafeBufferPointer<UInt8> {
        UnsafeBufferPointer(rebasing: bytes[starts[slot]..<starts[slot + 1]])
    }

    func deallocate() { bytes.deallocate() }
}

/// The per-entity lookups a record needs, built once per read.
private struct EntityReader {
    let entity: Schema.Entity
    let shapes: [ValueShape]
    /// The UTF-8 of each property name, by slot, to match keys in slot order without decoding them.
    let names: [[UInt8]]
    /// The UTF-8 of each property name the writer writes as is, by slot; `nil` for a name it would
    /// escape, which the fast path then never matches.
    private let plainNames: [[UInt8]?]
    /// Slots by property name and by original name (renamed properties).
    let slots: [String: Int]
    let isExternal: [Bool]
    let defaults: [StoreValue]
    let droppedNames: Set<String>

    init(entity: Schema.Entity, droppedNames: Set<String>) {
        self.entity = entity
        self.droppedNames = droppedNames
        shapes = entity.properties.map(ValueShape.init)
        names = entity.properties.map { Array($0.name.utf8) }
        plainNames = names.map { name in
            let plain = name.allSatisfy { $0 >= 0x20 && $0 != UInt8(ascii: "\"") && $0 != UInt8(ascii: "\\") }
            return plain ? name : nil
        }
        var slots: [String: Int] = [:]
        for property in entity.properties { slots[property.name] = property.slot }
        for attribute in entity.attributes {
            if let original = attribute.originalName, slots[original] == nil { slots[original] = attribute.slot }
        }
        for relationship in entity.relationships {
            if let original = relationship.originalName, slots[original] == nil { slots[original] = relationship.slot }
        }
        self.slots = slots
        isExternal = entity.properties.map { property in
            if case .attribute(let attribute) = property { return attribute.options.contains(.externalStorage) }
            return false
        }
        defaults = entity.properties.map { property in
            switch property {
            case .attribute(let attribute): attribute.defaultValue
            case .relationship(let relationship): relationship.isToOne ? .null : .references([])
            }
        }
    }
}

extension EntityReader {
    /// What ModelStore writes before each property's value after another value (`, "name": `, or
    /// `,"name":` compact), by slot; empty for a name the writer would escape.
    func literals(compact: Bool) -> [[UInt8]] {
        plainNames.map { name in
            guard let name else { return [] }
            return Array((compact ? ",\"" : ", \"").utf8) + name + Array((compact ? "\":" : "\": ").utf8)
        }
    }
}

/// Loads external files for one read and remembers the name of the last one.
private final class ExternalLoader {
    let load: (String) throws -> Data
    var lastName: String?

    init(load: @escaping (String) throws -> Data) { self.load = load }

    func load(_ name: String, at offset: Int) throws -> Data {
        do {
            let data = try load(name)
            lastName = name
            return data
        } catch var error as JSONReadError {
            error.offset = offset
            throw error
        }
    }
}
