import Foundation
import ModelStore
import ModelStoreSync
import SyncTestModels
import Testing

/// A class hierarchy synced through two server processes with `--scope-attribute owner`: one
/// entity holds the root and its subclasses, and the owner scopes the classes that have it.
@Suite(.enabled(if: Database.isConfigured, Database.skipMessage))
struct SyncServerInheritanceTests {
    static let schema = SyncTestSchema.hierarchies

    static func laptop(_ owner: String, _ label: String, memory: Int) -> Laptop {
        let laptop = Laptop(owner: owner, label: label)
        laptop.memory = memory
        return laptop
    }

    static func privateBoard(_ owner: String, _ title: String) -> PrivateBoard {
        let board = PrivateBoard()
        board.owner = owner
        board.title = title
        return board
    }

    @Test func eachUserHoldsTheirOwnModelsOfEveryClassAndTheSharedClassesWhole() async throws {
        let fixture = try await Fixture()
        defer { fixture.remove() }
        try SyncTestSchema.write(Self.schema, to: fixture.schemaFile)
        let first = try ServerProcess(fixture)
        let second = try ServerProcess(fixture)
        let phone = try await fixture.client("phone", subject: "alice", through: first, schema: Self.schema)
        let laptop = try await fixture.client(
            "laptop", scheme: "json", subject: "alice", through: second, schema: Self.schema)
        let bob = try await fixture.client("bob", subject: "bob", through: second, schema: Self.schema)

        let context = ModelContext(phone.container)
        let desk = Desk(owner: "alice", label: "standing")
        desk.width = 1.6
        let lobby = Board()
        lobby.title = "lobby"
        context.insert(Self.laptop("alice", "work", memory: 16))
        context.insert(desk)
        context.insert(Asset(owner: "alice", label: "lamp"))
        context.insert(lobby)
        context.insert(Self.privateBoard("alice", "plans"))
        try context.save()
        let bobContext = ModelContext(bob.container)
        bobContext.insert(Self.laptop("bob", "gaming", memory: 64))
        bobContext.insert(Self.privateBoard("bob", "secrets"))
        try bobContext.save()
        try await phone.engine.syncNow()
        try await bob.engine.syncNow()
        try await laptop.engine.syncNow()
        try await bob.engine.syncNow()

        let alices = [
            "Asset alice/lamp", "Board lobby", "Desk alice/standing 1.6", "Laptop alice/work 16",
            "PrivateBoard alice/plans",
        ]
        #expect(try SyncTestSchema.hierarchyModels(in: laptop.container) == alices)
        #expect(
            try SyncTestSchema.hierarchyModels(in: bob.container) == [
                "Board lobby", "Laptop bob/gaming 64", "PrivateBoard bob/secrets",
            ])

        // An edit of a subclass's own property travels back like any other.
        let laptopContext = ModelContext(laptop.container)
        let work = try #require(try laptopContext.fetch(FetchDescriptor<Laptop>()).first)
        work.memory = 32
        try laptopContext.save()
        try await laptop.engine.syncNow()
        try await phone.engine.syncNow()
        #expect(try SyncTestSchema.hierarchyModels(in: phone.container).contains("Laptop alice/work 32"))
    }

    @Test func aPushOfAnotherUsersModelOfAnyOwnedClassIsRefused() async throws {
        let fixture = try await Fixture()
        defer { fixture.remove() }
        try SyncTestSchema.write(Self.schema, to: fixture.schemaFile)
        let server = try ServerProcess(fixture)
        let shared = try ModelContainer(for: Self.schema, url: fixture.store)
        for (name, forged) in [
            ("laptop", Self.laptop("alice", "forged", memory: 1)), ("board", Self.privateBoard("alice", "forged")),
        ] as [(String, any PersistentModel)] {
            let bob = try await fixture.client(name, subject: "bob", through: server, schema: Self.schema)
            let context = ModelContext(bob.container)
            context.insert(forged)
            let board = Board()
            board.title = "in the same push " + name
            context.insert(board)
            try context.save()
            let refusal = await #expect(throws: SyncError.self) { try await bob.engine.syncNow() }
            #expect(refusal?.code == .refused, "a \(name) in Alice's name")
            #expect(try SyncTestSchema.hierarchyModels(in: shared).isEmpty, "nothing of the push was stored")
        }

        // A board of the shared root class goes through for anyone.
        let carol = try await fixture.client("carol", subject: "carol", through: server, schema: Self.schema)
        let context = ModelContext(carol.container)
        let board = Board()
        board.title = "notices"
        context.insert(board)
        try context.save()
        try await carol.engine.syncNow()
        #expect(try SyncTestSchema.hierarchyModels(in: shared) == ["Board notices"])
    }
}
