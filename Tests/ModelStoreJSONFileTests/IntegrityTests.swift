import Foundation
import ModelStore
import ModelStoreTestSupport
import Testing

@testable import ModelStoreJSONFile

/// The document's checksum: a changed byte is refused with an error that names the file and says
/// how to accept a deliberate edit; `seal` and `acceptsHandEdits` accept one.
struct IntegrityTests {
    /// A store with a few string values, closed; returns its file's bytes.
    private func writtenStore(_ directory: TemporaryDirectory) throws -> [UInt8] {
        let store = try Stores.open(directory.file())
        try Stores.save(
            store,
            inserting: try ["lamp", "chair", "kettle"].map { try Stores.new("Gadget", ["name": .string($0)]) })
        return Array(try Data(contentsOf: directory.file()))
    }

    @Test func everySingleBitFlipInAStringValueIsRefused() throws {
        let directory = try TemporaryDirectory()
        let original = try writtenStore(directory)
        let text = String(decoding: original, as: UTF8.self)
        var offsets: [Int] = []
        for word in ["lamp", "chair", "kettle"] {
            let range = try #require(text.range(of: "\"\(word)\""))
            let start = text.utf8.distance(from: text.utf8.startIndex, to: range.lowerBound) + 1
            offsets += Array(start..<(start + word.utf8.count))
        }
        for offset in offsets {
            for bit in 0..<7 {  // Bit 7 makes the byte invalid UTF-8, which the syntax check catches anyway.
                var damaged = original
                damaged[offset] ^= 1 << bit
                try Data(damaged).write(to: directory.file())
                do {
                    _ = try Stores.open(directory.file())
                    Issue.record("a flipped bit \(bit) at byte \(offset) opened")
                } catch let error as DataStoreError {
                    #expect(error.code == .corrupted, "\(error)")
                    #expect(error.message.contains(directory.file().path), "\(error)")
                }
                #expect(Array(try Data(contentsOf: directory.file())) == damaged, "a failed open changed the file")
            }
        }
    }

    @Test func aHandEditIsRefusedWithAnErrorThatSaysHowToAcceptIt() throws {
        let directory = try TemporaryDirectory()
        let original = String(decoding: try writtenStore(directory), as: UTF8.self)
        try Data(original.replacingOccurrences(of: "\"chair\"", with: "\"stool\"").utf8).write(to: directory.file())
        let error = try #require(throws: DataStoreError.self) { try Stores.open(directory.file()) }
        #expect(error.code == .corrupted)
        #expect(error.message.contains("does not match the checksum"), "\(error)")
        #expect(error.remedy?.contains("modelstore seal json:\(directory.file().path)") == true, "\(error)")
        #expect(error.remedy?.contains("acceptsHandEdits") == true, "\(error)")
        let damage = try #require(error.underlyingError as? JSONFileDamage)
        #expect(damage.line == 4)
    }

    @Test func acceptsHandEditsOpensAnEditedFileAndTheNextSaveSealsIt() throws {
        let directory = try TemporaryDirectory()
        let original = String(decoding: try writtenStore(directory), as: UTF8.self)
        try Data(original.replacingOccurrences(of: "\"chair\"", with: "\"stool\"").utf8).write(to: directory.file())
        let store = try Stores.open(directory.file()) { $0.acceptsHandEdits = true }
        #expect(try Stores.all(store, "Gadget").map { $0["name"] }.contains(.string("stool")))
        try Stores.save(store, inserting: [try Stores.new("Gadget", ["name": .string("desk")])])
        let reopened = try Stores.open(directory.file())
        #expect(try Stores.all(reopened, "Gadget").count == 4)
    }

    @Test func sealAcceptsAnEditAndAddsAChecksumToAFileWithout() throws {
        let directory = try TemporaryDirectory()
        let original = String(decoding: try writtenStore(directory), as: UTF8.self)
        let edited = original.replacingOccurrences(of: "\"chair\"", with: "\"stool\"")
        try Data(edited.utf8).write(to: directory.file())
        #expect(try JSONFileStore.seal(at: directory.file()))
        #expect(try JSONFileStore.seal(at: directory.file()) == false)
        #expect(try Stores.all(try Stores.open(directory.file()), "Gadget").count == 3)
        // Only the checksum changed.
        let sealed = directory.file().text
        #expect(sealed.split(separator: "\n").count == edited.split(separator: "\n").count)
        // A hand-written file without a checksum opens, and seal gives it one.
        let handWritten = "{\"formatVersion\": 1, \"records\": {\"Gadget\": [{\"$id\": 1, \"name\": \"x\"}]}}"
        try Data(handWritten.utf8).write(to: directory.file("hand.json"))
        _ = try Stores.open(directory.file("hand.json"))
        try Data(handWritten.utf8).write(to: directory.file("hand.json"))
        #expect(try JSONFileStore.seal(at: directory.file("hand.json")))
        #expect(directory.file("hand.json").text.hasPrefix("{\n  \"checksum\": \"crc32c:"))
        _ = try Stores.open(directory.file("hand.json"))
        var tampered = Array(try Data(contentsOf: directory.file("hand.json")))
        tampered[tampered.count - 8] = UInt8(ascii: "y")
        try Data(tampered).write(to: directory.file("hand.json"))
        expectError(.corrupted) { try Stores.open(directory.file("hand.json")) }
    }

    @Test func sealRefusesWhatIsNotADocument() throws {
        let directory = try TemporaryDirectory()
        try Data("{\"formatVersion\": 1, ".utf8).write(to: directory.file())
        expectError(.corrupted) { try JSONFileStore.seal(at: directory.file()) }
        #expect(directory.file().text == "{\"formatVersion\": 1, ")
        expectError(.notFound) { try JSONFileStore.seal(at: directory.file("none.json")) }
    }

    @Test func eachFormatVersionCaseHasOneCodeAndWording() throws {
        let cases: [(version: String, code: DataStoreError.Code, wording: String)] = [
            ("2", .unsupportedFeature, "newer than this version of ModelStore reads"),
            ("0", .corrupted, "which no version of ModelStore writes"),
            ("-1", .corrupted, "which no version of ModelStore writes"),
        ]
        for (version, code, wording) in cases {
            let directory = try TemporaryDirectory()
            try Data("{\"formatVersion\": \(version), \"records\": {}}".utf8).write(to: directory.file())
            let error = try #require(throws: DataStoreError.self) { try Stores.open(directory.file()) }
            #expect(error.code == code, "format version \(version): \(error)")
            #expect(error.message.contains(wording), "format version \(version): \(error)")
            #expect(error.message.contains("line 1, column 19"), "\(error)")
        }
    }
}
