import Foundation
import ModelStore
import ModelStoreSync
import Testing

/// The basic sync scenarios, written once and run against every kind of shared store: this
/// package's tests give them a SQLite host, the PostgreSQL package's a PostgreSQL one.
///
/// Each takes the host of an empty shared store and the URLs of two empty local stores, and
/// records what it finds with `#expect`, at the caller's source location.
public enum SyncScenarios {
    /// A model and its related model reach another replica, and the shared store holds both.
    public static func modelsAndRelationshipsReachAnotherReplica(
        host: SyncHost, _ first: String, _ second: String, sourceLocation: SourceLocation = #_sourceLocation
    ) async throws {
        let a = try Replica(url: first, host: host)
        let b = try Replica(url: second, host: host)
        let context = a.context()
        let lisbon = Journey("Lisbon", budget: 900)
        context.insert(lisbon)
        let leg = Leg("Alfama")
        context.insert(leg)
        leg.journey = lisbon
        try context.save()

        #expect(try await a.engine.syncNow().pushed == 2, sourceLocation: sourceLocation)
        #expect(try await b.engine.syncNow().pulled == 2, sourceLocation: sourceLocation)
        #expect(try b.journeys() == ["Lisbon: 900  [\"Alfama\"]"], sourceLocation: sourceLocation)
        #expect(try a.journeys() == b.journeys(), sourceLocation: sourceLocation)
        let shared = try ModelContext(host.container).fetch(FetchDescriptor<Leg>())
        #expect(shared.map { $0.journey?.name } == ["Lisbon"], sourceLocation: sourceLocation)
    }

    /// Edits to different properties of one model on two replicas both survive, with no conflict.
    public static func editsToDifferentPropertiesBothSurvive(
        host: SyncHost, _ first: String, _ second: String, sourceLocation: SourceLocation = #_sourceLocation
    ) async throws {
        let a = try Replica(url: first, host: host)
        let b = try Replica(url: second, host: host)
        let context = a.context()
        context.insert(Journey("Porto", budget: 100))
        try context.save()
        try await a.engine.syncNow()
        try await b.engine.syncNow()

        let onA = a.context()
        try #require(try onA.fetch(FetchDescriptor<Journey>()).first, sourceLocation: sourceLocation).budget = 250
        try onA.save()
        let onB = b.context()
        try #require(try onB.fetch(FetchDescriptor<Journey>()).first, sourceLocation: sourceLocation).notes =
            "by train"
        try onB.save()

        try await a.engine.syncNow()
        let round = try await b.engine.syncNow()
        #expect(round.conflicts == 0, sourceLocation: sourceLocation)
        try await a.engine.syncNow()
        #expect(try a.journeys() == ["Porto: 250 by train []"], sourceLocation: sourceLocation)
        #expect(try b.journeys() == a.journeys(), sourceLocation: sourceLocation)
        #expect(try a.engine.conflicts.list().isEmpty, sourceLocation: sourceLocation)
    }

    /// Both replicas change one property: the policy decides (the remote's value), the clash is a
    /// conflict with base, local and remote values, and resolving it by taking the local side is
    /// pushed like any edit.
    public static func aClashIsDecidedByThePolicyAndKeptAsAConflict(
        host: SyncHost, _ first: String, _ second: String, sourceLocation: SourceLocation = #_sourceLocation
    ) async throws {
        var remoteWins = SyncConfiguration()
        remoteWins.policies["Journey.budget"] = .remoteWins
        let a = try Replica(url: first, host: host, configuration: remoteWins)
        let b = try Replica(url: second, host: host, configuration: remoteWins)
        let context = a.context()
        context.insert(Journey("Faro", budget: 100))
        try context.save()
        try await a.engine.syncNow()
        try await b.engine.syncNow()

        let onA = a.context()
        try #require(try onA.fetch(FetchDescriptor<Journey>()).first, sourceLocation: sourceLocation).budget = 200
        try onA.save()
        let onB = b.context()
        try #require(try onB.fetch(FetchDescriptor<Journey>()).first, sourceLocation: sourceLocation).budget = 300
        try onB.save()
        try await a.engine.syncNow()
        let round = try await b.engine.syncNow()
        #expect(round.conflicts == 1, sourceLocation: sourceLocation)
        #expect(try b.journeys() == ["Faro: 200  []"], sourceLocation: sourceLocation)

        let conflicts = try b.engine.conflicts.list()
        try #require(conflicts.count == 1, sourceLocation: sourceLocation)
        let conflict = conflicts[0]
        #expect(conflict.kind == .property, sourceLocation: sourceLocation)
        #expect(conflict.property == "budget", sourceLocation: sourceLocation)
        #expect(conflict.base == .int(100), sourceLocation: sourceLocation)
        #expect(conflict.local == .int(300), sourceLocation: sourceLocation)
        #expect(conflict.remote == .int(200), sourceLocation: sourceLocation)
        #expect(conflict.chosen == .int(200), sourceLocation: sourceLocation)

        try b.engine.conflicts.resolve(conflict.id, take: .local)
        #expect(try b.engine.conflicts.list().isEmpty, sourceLocation: sourceLocation)
        #expect(try b.engine.conflicts.list(includingResolved: true).count == 1, sourceLocation: sourceLocation)
        try await b.engine.syncNow()
        try await a.engine.syncNow()
        #expect(try a.journeys() == ["Faro: 300  []"], sourceLocation: sourceLocation)
        #expect(try b.journeys() == ["Faro: 300  []"], sourceLocation: sourceLocation)
    }

    /// A delete reaches the other replica, and an edit made there to a model deleted here wins
    /// over the delete, as a conflict.
    public static func deletesTravelAndAnEditBeatsADelete(
        host: SyncHost, _ first: String, _ second: String, sourceLocation: SourceLocation = #_sourceLocation
    ) async throws {
        let a = try Replica(url: first, host: host)
        let b = try Replica(url: second, host: host)
        let context = a.context()
        context.insert(Journey("Braga"))
        context.insert(Journey("Evora"))
        try context.save()
        try await a.engine.syncNow()
        try await b.engine.syncNow()

        let onA = a.context()
        for journey in try onA.fetch(FetchDescriptor<Journey>()) { onA.delete(journey) }
        try onA.save()
        let onB = b.context()
        try #require(
            try onB.fetch(FetchDescriptor<Journey>(predicate: #Predicate { $0.name == "Evora" })).first,
            sourceLocation: sourceLocation
        ).notes = "keep"
        try onB.save()

        try await a.engine.syncNow()
        let round = try await b.engine.syncNow()
        #expect(round.conflicts == 1, sourceLocation: sourceLocation)
        try await a.engine.syncNow()
        #expect(try b.journeys() == ["Evora: 0 keep []"], sourceLocation: sourceLocation)
        #expect(try a.journeys() == ["Evora: 0 keep []"], sourceLocation: sourceLocation)
        #expect(try b.engine.conflicts.list().map(\.kind) == [.updateDeleted], sourceLocation: sourceLocation)
        let shared = try ModelContext(host.container).fetch(FetchDescriptor<Journey>())
        #expect(shared.map(\.name) == ["Evora"], sourceLocation: sourceLocation)
    }

    /// A round after everything moved moves nothing.
    public static func aRoundWithNothingToMoveMovesNothing(
        host: SyncHost, _ first: String, sourceLocation: SourceLocation = #_sourceLocation
    ) async throws {
        let a = try Replica(url: first, host: host)
        let context = a.context()
        context.insert(Journey("Sintra"))
        try context.save()
        try await a.engine.syncNow()
        try await a.engine.syncNow()
        func transactions(_ container: ModelContainer) throws -> Int {
            try ModelContext(container).fetchHistory(HistoryDescriptor<DefaultHistoryTransaction>()).count
        }
        let before = (try transactions(a.container), try transactions(host.container))
        #expect(try await a.engine.syncNow() == SyncSummary(), sourceLocation: sourceLocation)
        // Nothing was written on either side.
        #expect(try transactions(a.container) == before.0, sourceLocation: sourceLocation)
        #expect(try transactions(host.container) == before.1, sourceLocation: sourceLocation)
    }

    /// Two replicas each create a model with the same unique value offline: they become one
    /// model everywhere, and the values that differed are a conflict.
    public static func twoOfflineModelsWithOneUniqueValueBecomeOne(
        host: SyncHost, _ first: String, _ second: String, sourceLocation: SourceLocation = #_sourceLocation
    ) async throws {
        let a = try Replica(url: first, host: host)
        let b = try Replica(url: second, host: host)
        let onA = a.context()
        onA.insert(Journey("Lisbon", budget: 100))
        try onA.save()
        let onB = b.context()
        onB.insert(Journey("Lisbon", budget: 200))
        try onB.save()
        try await a.engine.syncNow()
        try await b.engine.syncNow()
        try await a.engine.syncNow()
        #expect(try a.journeys().count == 1, sourceLocation: sourceLocation)
        #expect(try b.journeys() == a.journeys(), sourceLocation: sourceLocation)
        #expect(
            try ModelContext(host.container).fetchCount(FetchDescriptor<Journey>()) == 1,
            sourceLocation: sourceLocation)
        #expect(
            try b.engine.conflicts.list().contains { $0.kind == .unique && $0.property == "budget" },
            sourceLocation: sourceLocation)
    }

    /// A first pull reads the shared store page by page in identifier order: a replica gets every
    /// model, and models deleted between two pages make the next page neither skip nor repeat any.
    public static func aFirstPullPagesThroughDeletionsWithoutSkippingAny(
        host: SyncHost, _ first: String, _ second: String, _ third: String,
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws {
        let a = try Replica(url: first, host: host)
        let context = a.context()
        for index in 0..<250 { context.insert(Journey(String(format: "j%03d", index), budget: index)) }
        try context.save()
        try await a.engine.syncNow()
        var small = SyncConfiguration()
        small.pageSize = 40
        let b = try Replica(url: second, host: host, configuration: small)
        let round = try await b.engine.syncNow()
        #expect(round.pulled == 250, sourceLocation: sourceLocation)
        #expect(try b.journeys() == a.journeys(), sourceLocation: sourceLocation)
        // Paging by hand, with deletions on the shared store between pages: every model that is
        // still there arrives exactly once.
        var cursor = SyncCursor.start
        var seen: [String] = []
        var deleted = false
        while true {
            let page = try host.pull(try message(["replica": "pager", "cursor": cursor, "limit": 40]))
            seen += page.models.filter { $0.values != nil }.map(\.globalID)
            cursor = page.cursor
            if cursor.snapshot == nil { break }
            if !deleted {
                deleted = true
                let onA = a.context()
                for journey in try onA.fetch(FetchDescriptor<Journey>()) where journey.budget % 3 == 0 {
                    onA.delete(journey)
                }
                try onA.save()
                try await a.engine.syncNow()
            }
        }
        #expect(Set(seen).count == seen.count, sourceLocation: sourceLocation)
        let remaining = try host.fetch(try message(["globalIDs": seen])).filter { $0.values != nil }
        #expect(remaining.count == 250 - 84, sourceLocation: sourceLocation)
        let c = try Replica(url: third, host: host, configuration: small)
        try await c.engine.syncNow()
        try await b.engine.syncNow()
        #expect(try c.journeys() == a.journeys(), sourceLocation: sourceLocation)
        #expect(try b.journeys() == a.journeys(), sourceLocation: sourceLocation)
        #expect(try a.journeys().count == 250 - 84, sourceLocation: sourceLocation)
    }

    /// A request message from its fields, as a transport decodes one (the message types are made by
    /// decoding outside the module).
    private static func message<Message: Decodable>(_ fields: [String: any Encodable]) throws -> Message {
        var object: [String: Any] = [:]
        for (name, value) in fields {
            object[name] = try JSONSerialization.jsonObject(
                with: JSONEncoder().encode(value), options: .fragmentsAllowed)
        }
        return try JSONDecoder().decode(Message.self, from: JSONSerialization.data(withJSONObject: object))
    }
}
