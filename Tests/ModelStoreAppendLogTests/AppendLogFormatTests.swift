import Foundation
import ModelStore
import ModelStoreAdapterKit
import ModelStoreFileIO
import ModelStoreTestSupport
import Testing

@testable import ModelStoreAppendLog

struct AppendLogFormatTests {
    @Test func crc32cHasTheCastagnoliCheckValue() {
        #expect(CRC32C.checksum(Array("123456789".utf8)) == 0xE306_9283)
        #expect(CRC32C.checksum([]) == 0)
        let long = (0..<1000).map { UInt8(truncatingIfNeeded: $0 * 31) }
        let whole = CRC32C.checksum(long)
        let split = long.withUnsafeBytes { raw in
            CRC32C.update(
                CRC32C.checksum(UnsafeRawBufferPointer(rebasing: raw[..<333])),
                UnsafeRawBufferPointer(rebasing: raw[333...]))
        }
        #expect(whole == split)
    }

    /// The processor's CRC-32C instruction and the tables give the same checksum for every length,
    /// alignment and earlier checksum, including the tails shorter than eight bytes.
    @Test func crc32cInstructionAgreesWithTheTables() {
        #if arch(x86_64)
            #expect(CRC32C.usesInstruction, "every x86-64 processor since 2008 has SSE 4.2's crc32")
        #endif
        var generator = SplitMix64(seed: 0xC5C3_2C)
        let bytes = (0..<(1 << 16) + 13).map { _ in UInt8(truncatingIfNeeded: generator.next()) }
        bytes.withUnsafeBytes { raw in
            for offset in 0..<8 {
                for length in [0, 1, 3, 7, 8, 9, 15, 16, 17, 63, 64, 65, 1000, raw.count - offset] {
                    let slice = UnsafeRawBufferPointer(rebasing: raw[offset..<offset + length])
                    for earlier: UInt32 in [0, 0xFFFF_FFFF, 0x1234_5678] {
                        #expect(
                            CRC32C.update(earlier, slice) == CRC32C.updateWithTable(earlier, slice),
                            "offset \(offset), length \(length), earlier \(earlier)")
                    }
                }
            }
        }
    }

    /// The per-entity live size against a dictionary kept by hand, over runs of one entity,
    /// interleavings, merges and the removal of an entity's size (the one whose run is being added up
    /// among them).
    @Test func liveSizeKeepsEachEntitysTotal() {
        var generator = SplitMix64(seed: 0x11FE)
        var size = LiveSize()
        var expected: [String: Int] = [:]
        for step in 0..<2_000 {
            let entity = ["A", "B", "C"][Int(generator.next() % 3)]
            switch generator.next() % 10 {
            case 0:
                // Deleting every model of the entity, as the store does: a delta of minus its size.
                var delta = LiveSize()
                delta.add(-size.size(of: entity), for: entity)
                size.add(delta)
                expected[entity] = 0
            case 1:
                var other = LiveSize()
                other.add(step, for: entity)
                other.add(1, for: "A")
                size.add(other)
                expected[entity, default: 0] += step
                expected["A", default: 0] += 1
            default:
                let bytes = Int(generator.next() % 200) - 50
                size.add(bytes, for: entity)
                expected[entity, default: 0] += bytes
            }
            #expect(size.total == expected.values.reduce(0, +), "step \(step)")
            #expect(size.size(of: entity) == expected[entity, default: 0], "step \(step)")
        }
        for entity in ["A", "B", "C"] {
            let before = size.total
            #expect(size.size(of: entity) == expected[entity, default: 0], "entity \(entity)")
            size.add(-size.size(of: entity), for: entity)
            #expect(before - size.total == expected[entity, default: 0], "entity \(entity)")
        }
        #expect(size.total == 0)
    }

    @Test func framesTellCutFromDamaged() throws {
        var writer = ByteWriter()
        let start = Frame.begin(&writer)
        writer.write("payload")
        try Frame.finish(&writer, at: start)
        let bytes = writer.bytes
        bytes.withUnsafeBytes { #expect(Frame.read($0, at: 0) == .frame(payload: 12..<bytes.count, end: bytes.count)) }
        Array(bytes.prefix(5)).withUnsafeBytes { #expect(Frame.read($0, at: 0) == .incompleteHeader(available: 5)) }
        Array(bytes.dropLast(2)).withUnsafeBytes {
            #expect(Frame.read($0, at: 0) == .incompletePayload(declared: 8, available: 6))
        }
        var flipped = bytes
        flipped[1] ^= 1
        flipped.withUnsafeBytes { #expect(Frame.read($0, at: 0) == .damagedHeader) }
        flipped = bytes
        flipped[14] ^= 1
        flipped.withUnsafeBytes { #expect(Frame.read($0, at: 0) == .damagedPayload(declared: 8)) }
    }

    /// A delete of every model writes its record straight from the identifiers: the same bytes as
    /// the record built change by change, for the store's own integer keys and for every other
    /// kind of identifier, and it reads back as those deletions.
    @Test func deletionRecordMatchesTheRecordBuiltChangeByChange() throws {
        let context = IdentifierContext(storeIdentifier: "log-1234", shapes: ShapeTable(schema: noteSchema))
        let code = context.shapes.code(of: "Note")
        let ids: [PersistentIdentifier] = [
            .identifier(for: "log-1234", entityName: "Note", primaryKey: Int64(1)),
            .identifier(for: "log-1234", entityName: "Note", primaryKey: Int64(-300)),
            .identifier(for: "log-1234", entityName: "Note", primaryKey: Int64.max),
            .identifier(for: "log-1234", entityName: "Note", primaryKey: "text-key"),
            .identifier(for: "another-store", entityName: "Note", primaryKey: Int64(7)),
        ]
        let timestamp = Date(timeIntervalSinceReferenceDate: 42.5)
        for (code, author) in [(code, "author" as String?), (nil, nil)] {
            var direct = ByteWriter()
            try TransactionRecord.encodeDeletion(
                number: 9, timestamp: timestamp, author: author, of: PersistentIdentifiers(ids), code: code,
                into: &direct, context: context)
            let record = TransactionRecord(
                number: 9, timestamp: timestamp, author: author, inserted: [], updated: [],
                deleted: ids.map { StoredChange(code: code, id: $0, values: []) })
            var built = ByteWriter()
            try record.encode(into: &built, context: context)
            #expect(direct.bytes == built.bytes, "code \(code.map(String.init) ?? "nil")")
            let read = try direct.bytes.withUnsafeBytes { raw -> TransactionRecord in
                guard case .frame(let payload, _) = Frame.read(raw, at: 0) else {
                    throw FormatError(reason: "no frame", offset: 0)
                }
                return try TransactionRecord.decode(UnsafeRawBufferPointer(rebasing: raw[payload]), context: context)
            }
            #expect(read.deleted.map(\.id) == ids && read.deleted.allSatisfy(\.values.isEmpty))
            #expect(read.number == 9 && read.author == author && read.inserted.isEmpty && read.updated.isEmpty)
        }
    }

    @Test func integersKeepTheirValueAtTheEdges() throws {
        var writer = ByteWriter()
        let unsigned: [UInt64] = [0, 1, 127, 128, 16_383, 16_384, UInt64(UInt32.max), .max]
        let signed: [Int64] = [0, -1, 1, -64, 64, .min, .max]
        for value in unsigned { writer.writeVarint(value) }
        for value in signed { writer.writeSigned(value) }
        try writer.bytes.withUnsafeBytes { (raw: UnsafeRawBufferPointer) throws in
            var reader = ByteReader(raw)
            for value in unsigned { #expect(try reader.readVarint() == value) }
            for value in signed { #expect(try reader.readSigned() == value) }
            #expect(reader.isAtEnd)
            #expect(throws: FormatError.self) { try reader.readVarint() }
        }
    }

    @Test func everyKindOfValueRoundTripsThroughTheLog() throws {
        let directory = try TemporaryDirectory(memoryBacked: true)
        let values: [StoreValue] = [
            .null, .bool(true), .bool(false), .int(.min), .int(.max), .uint(.max), .double(-0.0),
            .double(.infinity), .double(Double(bitPattern: 0x7FF8_0000_0000_0123)), .double(0.1),
            .decimal(Decimal(string: "-12345678901234567890.123456789")!), .string("é ✓ 🧭 \u{0}"),
            .date(Date(timeIntervalSinceReferenceDate: 123.456_789)), .data(Data([0, 1, 255])),
            .uuid(UUID()), .url(URL(string: "https://example.com/a%20b?q=1#f")!),
            .url(URL(fileURLWithPath: "/tmp/a b")),
            .array([.int(1), .array([.string("nested")]), .null]),
            .dictionary(["b": .int(2), "a": .dictionary(["deep": .bool(true)])]),
            .reference(.identifier(for: "other-store", entityName: "Elsewhere", primaryKey: "key-1")),
            .references([.identifier(for: "other-store", entityName: "Note", primaryKey: Int64(-5))]),
        ]
        let store = try openStore(directory.store)
        let entity = try #require(noteSchema.entity(named: "Note"))
        let slot = try #require(entity.slot(of: "tags"))
        var snapshots: [DefaultSnapshot] = []
        for (index, value) in values.enumerated() {
            var snapshot = try noteSnapshot("value \(index)")
            snapshot.values[slot] = value
            snapshots.append(snapshot)
        }
        let ids = try save(store, inserting: snapshots)
        store.close()
        let reopened = try openStore(directory.store)
        for (id, value) in zip(ids, values) {
            let stored = try current(reopened, id).values[slot]
            if case .double(let expected) = value, case .double(let found) = stored {
                #expect(expected.bitPattern == found.bitPattern)
            } else {
                #expect(stored == value)
            }
        }
    }
}
