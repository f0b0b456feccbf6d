import Foundation
import ModelStore
import ModelStoreTestSupport
import Testing

struct StoreURLTests {
    @Test func passwordsInURLsNeverReachMessages() throws {
        #expect(
            StoreURL.redactingPassword(in: "postgres://app:s3cret@db.internal:5432/trips?namespace=x")
                == "postgres://app:***@db.internal:5432/trips?namespace=x")
        #expect(StoreURL.redactingPassword(in: "postgres://app@db/trips") == "postgres://app@db/trips")
        #expect(StoreURL.redactingPassword(in: "json:/tmp/a:b@c.json") == "json:/tmp/a:b@c.json")
        #expect(try StoreURL("postgres://app:s3cret@db/trips").description == "postgres://app:***@db/trips")
        let error = #expect(throws: DataStoreError.self) {
            try StoreRegistry().url("nosuch://app:s3cret@db/trips")
        }
        #expect(error.map { !"\($0)".contains("s3cret") } == true, "\(String(describing: error))")
    }

    @Test func schemeAloneHasNoLocationOrOptions() throws {
        let url = try StoreURL("memory:")
        #expect(url.scheme == "memory")
        #expect(url.location == "")
        #expect(url.options.isEmpty)
        #expect(url.description == "memory:")
    }

    @Test func schemeIsCaseInsensitive() throws {
        #expect(try StoreURL("JSON:trips.json").scheme == "json")
    }

    @Test func relativePathResolvesAgainstTheCurrentDirectory() throws {
        let url = try StoreURL("json:data/trips.json")
        #expect(url.location == "data/trips.json")
        let expected = URL(fileURLWithPath: FileManager.default.currentDirectoryPath)
            .appendingPathComponent("data/trips.json").standardizedFileURL
        #expect(url.fileURL == expected)
    }

    @Test func absolutePathWithOrWithoutSlashes() throws {
        #expect(try StoreURL("json:/tmp/trips.json").fileURL.path == "/tmp/trips.json")
        #expect(try StoreURL("json:///tmp/trips.json").fileURL.path == "/tmp/trips.json")
    }

    @Test func tildeExpandsToTheHomeDirectory() throws {
        let home = NSString(string: "~").expandingTildeInPath
        #expect(try StoreURL("log:~/trips-log").fileURL.path == URL(fileURLWithPath: home + "/trips-log").path)
    }

    @Test func percentEscapesAreDecodedAndStrayPercentSignsKept() throws {
        #expect(try StoreURL("json:my%20trips.json").location == "my trips.json")
        #expect(try StoreURL("json:100%.json").location == "100%.json")
    }

    @Test func optionsAreReadInOrder() throws {
        let url = try StoreURL("log:data?durability=everySave&compaction=manual")
        #expect(url.location == "data")
        #expect(
            url.options == [
                StoreURL.Option(name: "durability", value: "everySave"),
                StoreURL.Option(name: "compaction", value: "manual"),
            ])
        #expect(url.option("durability") == "everySave")
        #expect(url.option("missing") == nil)
    }

    @Test(arguments: [
        ("", "the store URL is empty"),
        ("   ", "the store URL is empty"),
        ("trips.json", "the store URL 'trips.json' does not start with a scheme"),
        ("1json:x", "the store URL '1json:x' does not start with a scheme"),
        (":x", "the store URL ':x' does not start with a scheme"),
        ("log:data?durability", "the option 'durability' of the store URL 'log:data?durability' is not NAME=VALUE"),
        ("log:data?=x", "the option '=x' of the store URL 'log:data?=x' is not NAME=VALUE"),
        ("log:d?a=1&a=2", "the store URL 'log:d?a=1&a=2' gives the option 'a' twice"),
    ])
    func malformedStringsAreRejectedByName(string: String, message: String) {
        #expect {
            try StoreURL(string)
        } throws: { error in
            guard let error = error as? DataStoreError else { return false }
            return error.code == .invalidConfiguration && error.message == message && error.remedy != nil
        }
    }

    @Test func aStringWithoutSchemeSuggestsOne() throws {
        let error = try #require(throws: DataStoreError.self) { try StoreURL("trips.json") }
        #expect(error.remedy?.contains("'json:trips.json'") == true)
    }
}
