import Foundation
import ModelStore
import ModelStoreTestSupport
import Testing

@testable import ModelStoreJSONFile

/// Files that must not open: each gives a typed error naming the file, the line and column and
/// what is wrong, and the failed open writes nothing.
struct BadInputTests {
    /// A small valid document, written by the store.
    static func validDocument(in directory: TemporaryDirectory) throws -> String {
        let store = try Stores.open(directory.file("valid.json"))
        let ids = try Stores.save(
            store, inserting: [try Stores.new("Gadget", ["name": .string("lamp"), "int": .int(5)])])
        try Stores.save(
            store, inserting: [try Stores.new("Part", ["label": .string("bulb"), "gadget": .reference(ids[0])])])
        return directory.file("valid.json").text
    }

    /// Opens `text` as a store file and returns the error, checking that the open wrote nothing.
    func openError(
        _ text: String, bytes: [UInt8]? = nil, configure: (inout JSONFileStoreConfiguration) -> Void = { _ in },
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws -> DataStoreError? {
        let directory = try TemporaryDirectory()
        let url = directory.file()
        try Data(bytes ?? Array(text.utf8)).write(to: url)
        let before = try FileManager.default.attributesOfItem(atPath: url.path)[.modificationDate] as? Date
        defer {
            #expect(
                (try? Data(contentsOf: url)) == Data(bytes ?? Array(text.utf8)), "a failed open changed the file",
                sourceLocation: sourceLocation)
            let after = try? FileManager.default.attributesOfItem(atPath: url.path)[.modificationDate] as? Date
            #expect(after == before, sourceLocation: sourceLocation)
            let others = ((try? FileManager.default.contentsOfDirectory(atPath: directory.url.path)) ?? [])
                .filter { $0 != "store.json" && $0 != "store.json.lock" }
            #expect(others.isEmpty, "a failed open wrote \(others)", sourceLocation: sourceLocation)
        }
        do {
            _ = try Stores.open(url, configure: configure)
            Issue.record("the file opened", sourceLocation: sourceLocation)
            return nil
        } catch let error as DataStoreError {
            #expect(
                error.message.contains(url.path), "the error does not name the file: \(error)",
                sourceLocation: sourceLocation)
            return error
        }
    }

    func expectError(
        _ text: String, code: DataStoreError.Code = .corrupted, line: Int? = nil, column: Int? = nil,
        saying words: String,
        configure: (inout JSONFileStoreConfiguration) -> Void = { _ in },
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let error = try #require(
            try openError(text, configure: configure, sourceLocation: sourceLocation), sourceLocation: sourceLocation)
        #expect(error.code == code, "\(error)", sourceLocation: sourceLocation)
        #expect(error.message.contains(words), "\(error)", sourceLocation: sourceLocation)
        if let line {
            let position = column.map { "at line \(line), column \($0)" } ?? "at line \(line),"
            #expect(error.message.contains(position), "\(error)", sourceLocation: sourceLocation)
        }
    }

    @Test func truncatedFiles() throws {
        let directory = try TemporaryDirectory()
        let valid = try Self.validDocument(in: directory)
        let bytes = Array(valid.utf8)
        for length in [1, 10, bytes.count / 3, bytes.count / 2, bytes.count - 40, bytes.count - 3] {
            let truncated = String(decoding: bytes[..<length], as: UTF8.self)
            let error = try #require(try openError(truncated))
            #expect(error.code == .corrupted)
            #expect(error.message.contains("line "), "\(error)")
            #expect(error.message.contains("truncated") || error.message.contains("expected"), "\(error)")
        }
        try expectError("", saying: "the file is empty")
    }

    @Test func textThatIsNotJSON() throws {
        try expectError("hello, world", line: 1, column: 1, saying: "does not start with '{'")
        try expectError(
            "{\n  \"formatVersion\": 1,\n  \"records\": {\"Gadget\": [}\n}", line: 3, column: 26, saying: "expected")
        try expectError(
            "{\"formatVersion\": 1, \"records\": {}, \"records\": {}}", line: 1, column: 37,
            saying: "the document has the key 'records' twice")
        try expectError("{\"formatVersion\": 1} trailing", line: 1, column: 22, saying: "more text after the end")
        try expectError("{\"formatVersion\": 1, 'records': {}}", line: 1, column: 22, saying: "expected a quoted key")
        let invalid = try #require(try openError("", bytes: [0x7B, 0x22, 0xFF, 0xFE, 0x22, 0x3A, 0x31, 0x7D]))
        #expect(invalid.message.contains("line 1, column 2 (byte 1): a string is not valid UTF-8"), "\(invalid)")
    }

    @Test func unknownFormatVersion() throws {
        try expectError(
            "{\"formatVersion\": 2, \"records\": {}}", code: .unsupportedFeature, line: 1, column: 19,
            saying: "format version 2")
        try expectError("{\"records\": {}}", saying: "has no 'formatVersion'")
        try expectError("{\"format\": \"SomethingElse\", \"formatVersion\": 1}", saying: "not 'ModelStore.JSONFile'")
    }

    @Test func recordsThatDoNotMatchTheSchema() throws {
        let header = "{\"formatVersion\": 1, \"storeIdentifier\": \"json-x\", \"records\": {\"Gadget\": [\n"
        try expectError(
            header + "{\"$id\": 1, \"colour\": \"red\"}]}}", line: 2, column: 12,
            saying: "a 'Gadget' record has the property 'colour', which 'Gadget' does not have")
        try expectError(
            header + "{\"$id\": 1, \"int\": \"five\"}]}}", line: 2, column: 19,
            saying: "'Gadget.int': expected an integer that fits in Int64 but found a string")
        try expectError(header + "{\"$id\": 1, \"int8\": 300}]}}", line: 2, column: 20, saying: "does not fit in Int8")
        try expectError(header + "{\"$id\": 1, \"uuid\": \"nope\"}]}}", saying: "expected a UUID string")
        try expectError(header + "{\"$id\": 1, \"data\": \"@@@\"}]}}", saying: "expected a base64 string")
        try expectError(header + "{\"$id\": 1, \"flag\": 1}]}}", saying: "expected true or false but found a number")
        try expectError(header + "{\"name\": \"x\"}]}}", line: 2, column: 1, saying: "a 'Gadget' record has no '$id'")
        try expectError(header + "{\"$id\": 1, \"int\": 1, \"int\": 2}]}}", saying: "has the property 'int' twice")
        // A repeated key the fast path matches is named at its own place, in the spaced layout
        // (plaintext documents) and the compact one (sealed documents).
        let repeated = [
            ("{\"$id\": 1, \"flag\": true, \"name\": \"a\", \"flag\": false}", 39),
            ("{\"$id\":1,\"flag\":true,\"name\":\"a\",\"flag\":false}", 33),
        ]
        for (record, column) in repeated {
            try expectError(header + record + "]}}", line: 2, column: column, saying: "has the property 'flag' twice")
        }
        try expectError(header + "[1]]}}", saying: "a 'Gadget' record must be an object")
        try expectError(
            "{\"formatVersion\": 1, \"records\": {\"Gizmo\": []}}", line: 1, column: 34,
            saying: "records of 'Gizmo', an entity that neither the schema nor the file's header declares")
    }

    @Test func duplicateIdentifiers() throws {
        try expectError(
            "{\"formatVersion\": 1, \"records\": {\"Gadget\": [\n{\"$id\": 1, \"name\": \"a\"},\n{\"$id\": 1, "
                + "\"name\": \"b\"}]}}",
            line: 3, column: 1, saying: "two 'Gadget' records have the '$id' 1")
    }

    @Test func uniqueValuesStoredTwice() throws {
        let error = try #require(
            try openError(
                "{\"formatVersion\": 1, \"records\": {\"Gadget\": [{\"$id\": 1, \"name\": \"a\"}, {\"$id\": 2, "
                    + "\"name\": \"b\"}, {\"$id\": 3, \"name\": \"a\"}]}}"
            ))
        #expect(error.code == .corrupted)
        #expect(error.message.contains("share a unique value of 'name'"), "\(error)")
        // The message names both records and the value they share, and says how to fix it.
        #expect(error.message.contains(":1) and Gadget("), "\(error)")
        #expect(error.message.contains(":3) both have \"a\""), "\(error)")
        #expect(error.remedy?.contains("change or remove one of the two models") == true, "\(error)")
    }

    @Test func danglingRelationships() throws {
        let text = """
            {"formatVersion": 1, "storeIdentifier": "json-x", "records": {
              "Gadget": [{"$id": 1, "name": "a"}],
              "Part": [
                {"$id": 2, "label": "ok", "gadget": 1},
                {"$id": 3, "label": "lost", "gadget": 9}
              ]
            }}
            """
        try expectError(
            text, line: 5, column: 5,
            saying: "the 'Part' record 3 refers through 'gadget' to the 'Gadget' 9, which the file does not have")
        let wrongEntity = """
            {"formatVersion": 1, "records": {"Part": [
              {"$id": 2, "label": "x", "gadget": {"$reference": {"entity": "Part", "key": 2}}}
            ]}}
            """
        try expectError(wrongEntity, line: 2, saying: "but 'Part.gadget' holds 'Gadget' models")
    }

    @Test func missingExternalFile() throws {
        try expectError(
            "{\"formatVersion\": 1, \"records\": {\"Gadget\": [\n{\"$id\": 1, \"photo\": {\"$file\": "
                + "\"0000000000000000.bin\"}}]}}",
            line: 2, column: 31, saying: "the external file")
        try expectError(
            "{\"formatVersion\": 1, \"records\": {\"Gadget\": [{\"$id\": 1, \"photo\": {\"$file\": "
                + "\"../../etc/passwd\"}}]}}",
            saying: "not a valid external file name")
        try expectError(
            "{\"formatVersion\": 1, \"records\": {\"Gadget\": [{\"$id\": 1, \"data\": {\"$file\": \"a.bin\"}}]}}",
            saying: "'$file' is only allowed as the value of an '.externalStorage' attribute")
    }

    @Test func limitsKeepHostileFilesOut() throws {
        let deep = String(repeating: "[", count: 40) + String(repeating: "]", count: 40)
        try expectError("{\"formatVersion\": 1, \"extra\": \(deep)}", saying: "nested more than 32 levels") {
            $0.limits.maximumDepth = 32
        }
        let dimensions = "{\"label\": " + String(repeating: "[", count: 40) + String(repeating: "]", count: 40) + "}"
        try expectError(
            "{\"formatVersion\": 1, \"records\": {\"Gadget\": [{\"$id\": 1, \"dimensions\": \(dimensions)}]}}",
            saying: "nested more than 32 levels"
        ) { $0.limits.maximumDepth = 32 }
        let long = String(repeating: "x", count: 2_000)
        try expectError(
            "{\"formatVersion\": 1, \"records\": {\"Gadget\": [{\"$id\": 1, \"name\": \"\(long)\"}]}}",
            saying: "more than the limit of 1000"
        ) { $0.limits.maximumStringLength = 1_000 }
        let number = String(repeating: "9", count: 300)
        try expectError(
            "{\"formatVersion\": 1, \"records\": {\"Gadget\": [{\"$id\": 1, \"double\": \(number)}]}}",
            saying: "more than the limit of 256")
        try expectError("{\"formatVersion\": 1, \"records\": {}}", saying: "larger than the limit of 10 bytes") {
            $0.limits.maximumFileSize = 10
        }
    }

    @Test func aMissingFileWithABackupIsNotSilentlyReplaced() throws {
        let directory = try TemporaryDirectory()
        _ = try Stores.open(directory.file())
        _ = try Stores.save(
            try Stores.open(directory.file()), inserting: [try Stores.new("Gadget", ["name": .string("a")])])
        try FileManager.default.removeItem(at: directory.file())
        ModelStoreTestSupport.expectError(.notFound) { try Stores.open(directory.file()) }
        #expect(!FileManager.default.fileExists(atPath: directory.file().path))
    }

    @Test func aNewerSchemaVersionIsRefused() throws {
        try expectError(
            "{\"formatVersion\": 1, \"schemaVersion\": \"2.0.0\", \"records\": {}}", code: .invalidSchema,
            saying: "schema version 2.0.0, newer than this app's 1.0.0")
    }
}
