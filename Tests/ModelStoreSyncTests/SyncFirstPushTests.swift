import Foundation
import ModelStore
import ModelStoreAdapters
import ModelStoreSync
import ModelStoreTestSupport
import Testing

/// The first push of a replica that joined empty: it has nothing to compare when every model came
/// from its first round's merges, and still pushes a model the app saved during that round.
@Suite struct SyncFirstPushTests {
    let directory: TemporaryDirectory

    init() throws { directory = try TemporaryDirectory() }

    func seededHost(legs: Int) async throws -> SyncHost {
        let host = try makeHost(url: "sqlite:" + directory.path("shared.sqlite"))
        let laptop = try Replica(url: "sqlite:" + directory.path("laptop.sqlite"), host: host)
        let context = laptop.context()
        for number in 0..<legs { context.insert(Leg("P\(number)")) }
        try context.save()
        #expect(try await laptop.engine.syncNow().pushed == legs)
        return host
    }

    static func legs(_ container: ModelContainer) throws -> [String] {
        try ModelContext(container).fetch(FetchDescriptor<Leg>()).map(\.place).sorted()
    }

    @Test func aReplicaThatJoinedEmptyPushesNothingBackAndThenOnlyItsEdits() async throws {
        let host = try await seededHost(legs: 23)
        var configuration = SyncConfiguration()
        configuration.pageSize = 5
        let phone = try Replica(
            url: "sqlite:" + directory.path("phone.sqlite"), host: host, configuration: configuration)
        let first = try await phone.engine.syncNow()
        #expect(first.pulled == 23 && first.pushed == 0)
        let context = phone.context()
        for leg in try context.fetch(FetchDescriptor<Leg>()) where leg.place == "P4" { leg.place = "P4 here" }
        try context.save()
        #expect(try await phone.engine.syncNow().pushed == 1)
        #expect(try await phone.engine.syncNow().pushed == 0)
        let expected = ((0..<23).map { "P\($0)" }.filter { $0 != "P4" } + ["P4 here"]).sorted()
        #expect(try Self.legs(phone.container) == expected)
        #expect(try Self.legs(host.container) == expected)
    }

    @Test func aModelTheAppSavesDuringTheFirstRoundIsPushed() async throws {
        let host = try await seededHost(legs: 23)
        var configuration = SyncConfiguration()
        configuration.pageSize = 5
        let container = try ModelContainer(for: Replica.schema, url: "sqlite:" + directory.path("phone.sqlite"))
        let transport = PullCountingTransport(host: host, beforePull: 2) {
            let context = ModelContext(container)
            context.insert(Leg("saved mid-round"))
            try context.save()
        }
        let engine = try SyncEngine(container: container, transport: transport, configuration: configuration)
        let first = try await engine.syncNow()
        #expect(first.pulled == 23)
        // Pushed in the first round or the next, but pushed.
        let second = try await engine.syncNow()
        #expect(first.pushed + second.pushed == 1, "pushed \(first.pushed), then \(second.pushed)")
        let expected = ((0..<23).map { "P\($0)" } + ["saved mid-round"]).sorted()
        #expect(try Self.legs(container) == expected)
        #expect(try Self.legs(host.container) == expected)
    }
}
