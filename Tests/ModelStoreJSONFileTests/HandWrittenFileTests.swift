import Foundation
import ModelStore
import ModelStoreTestSupport
import Testing

@testable import ModelStoreJSONFile

/// Files written by hand, in any valid JSON layout, open; what they leave out takes defaults.
struct HandWrittenFileTests {
    func open(_ text: String, schema: Schema = Stores.schema) throws -> (JSONFileStore, TemporaryDirectory) {
        let directory = try TemporaryDirectory()
        try Data(text.utf8).write(to: directory.file())
        return (try Stores.open(directory.file(), schema: schema), directory)
    }

    @Test func anyLayoutAndKeyOrderOpens() throws {
        // Records before the header, keys in any order, "$id" last, odd whitespace, escapes in keys.
        let text = """
            {"records":{"Part":[{"label":"wheel","gadget":7,"$id":8}],
            "Gadget"  :  [
            \t{ "int" : -3 ,"na\\u006de":"lamp",  "$id" : 7 , "parts" : [ 8 ] }
            ]},
               "storeIdentifier"
               :
               "json-hand",
            "formatVersion":1}
            """
        let (store, directory) = try open(text)
        defer { withExtendedLifetime(directory) {} }
        #expect(store.identifier == "json-hand")
        let gadget = try #require(try Stores.all(store, "Gadget").first)
        #expect(gadget.persistentIdentifier == .identifier(for: "json-hand", entityName: "Gadget", primaryKey: 7))
        #expect(gadget["name"] == .string("lamp"))
        #expect(gadget["int"] == .int(-3))
        let part = try #require(try Stores.all(store, "Part").first)
        #expect(part["gadget"] == .reference(gadget.persistentIdentifier))
        #expect(gadget["parts"] == .references([part.persistentIdentifier]))
    }

    @Test func missingPropertiesTakeTheirDefaultsAndFriendlyFormsAreAccepted() throws {
        let text = """
            {
              "formatVersion": 1,
              "records": {
                "Gadget": [
                  {"$id": "lamp-1", "name": "lamp", "date": "2024-05-01T09:30:00Z", "decimal": 12.50, "double": 3,
                   "url": "https://example.com", "float": 0.1, "strings": ["a"], "doublesByName": {"x": 1}}
                ]
              }
            }
            """
        let (store, directory) = try open(text)
        let gadget = try #require(try Stores.all(store, "Gadget").first)
        #expect(gadget.persistentIdentifier.primaryKey == .string("lamp-1"))
        #expect(gadget["date"] == .date(try Date("2024-05-01T09:30:00Z", strategy: .iso8601)))
        #expect(gadget["decimal"] == .decimal(Decimal(string: "12.5")!))
        #expect(gadget["double"] == .double(3))
        #expect(gadget["float"] == .double(Double(Float(0.1))))
        #expect(gadget["doublesByName"] == .dictionary(["x": .double(1)]))
        #expect(gadget["int"] == .int(0), "a missing property takes its default")
        #expect(gadget["optionalString"] == .null)
        #expect(gadget["parts"] == .references([]))
        // The first save writes the file in the store's own form, keeping the string key.
        try Stores.save(store, inserting: [try Stores.new("Gadget", ["name": .string("second")])])
        let saved = directory.file().text
        #expect(saved.contains("{\"$id\": \"lamp-1\", \"name\": \"lamp\""))
        #expect(saved.contains("\"storeIdentifier\": \"\(store.identifier)\""))
        let reopened = try Stores.open(directory.file())
        #expect(try Stores.all(reopened, "Gadget").count == 2)
    }

    @Test func propertiesTheHeaderListsButTheSchemaDropsAreIgnored() throws {
        // A lightweight migration: the file has a property the model no longer declares.
        let text = """
            {"formatVersion": 1, "entities": [{"name": "Gadget", "properties": [{"name": "name"}, {"name": "colour"}]}],
             "records": {"Gadget": [{"$id": 1, "name": "lamp", "colour": "red"}]}}
            """
        let (store, directory) = try open(text)
        #expect(try Stores.all(store, "Gadget").first?["name"] == .string("lamp"))
        try Stores.save(store, inserting: [try Stores.new("Gadget", ["name": .string("b")])])
        #expect(!directory.file().text.contains("colour"))
    }

    @Test func aFileWithOnlyTheVersionIsAnEmptyStore() throws {
        let (store, directory) = try open("{\"formatVersion\":1}")
        defer { withExtendedLifetime(directory) {} }
        #expect(try Stores.all(store, "Gadget").isEmpty)
        let ids = try Stores.save(store, inserting: [try Stores.new("Gadget", ["name": .string("a")])])
        #expect(ids.count == 1)
    }
}
