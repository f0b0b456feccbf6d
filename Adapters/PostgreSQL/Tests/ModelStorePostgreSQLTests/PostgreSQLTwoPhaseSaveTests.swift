import Foundation
import ModelStore
import ModelStoreInMemory
import ModelStorePostgreSQL
import PostgreSQLTestModels
import Testing

/// A member with a unique email, kept in another store than the counters.
final class Member: PersistentModel {
    @Attribute(.unique) var email: String = ""

    let persistentBackingData = BackingData()
    init() {}
    convenience init(_ email: String) {
        self.init()
        self.email = email
    }
}

/// Saves across PostgreSQL and another store: all or nothing (PostgreSQL's `PREPARE TRANSACTION`).
@Suite(.enabled(if: PostgreSQLServer.isConfigured, PostgreSQLServer.skipMessage))
struct PostgreSQLTwoPhaseSaveTests {
    /// Counters on the server, members in memory; the store order decides which commits first.
    static func container(postgreSQLFirst: Bool, namespace: String = PostgreSQLServer.freshNamespace("twophase"))
        throws -> ModelContainer
    {
        var server = try PostgreSQLServer.configuration(namespace: namespace)
        server.schema = Schema([Counter.self])
        let memory = InMemoryStoreConfiguration(name: "members", schema: Schema([Member.self]))
        let configurations: [any DataStoreConfiguration] = postgreSQLFirst ? [server, memory] : [memory, server]
        return try ModelContainer(for: Schema([Counter.self, Member.self]), configurations: configurations)
    }

    /// The prepared transactions the server holds for a namespace (none once a save ended).
    static func preparedTransactions(_ namespace: String) async throws -> [String] {
        let admin = try await AdminConnection.open()
        defer { Task { try? await admin.close() } }
        return try await admin.run(
            "SELECT gid FROM pg_prepared_xacts WHERE database = current_database() "
                + "AND gid LIKE 'modelstore:\(namespace):%'")
    }

    static func counter(_ name: String, in context: ModelContext) throws -> Counter {
        try #require(try context.fetch(FetchDescriptor<Counter>(predicate: #Predicate { $0.name == name })).first)
    }

    @Test(arguments: [true, false])
    func whenTheOtherStoreRefusesNothingReachesPostgreSQL(postgreSQLFirst: Bool) async throws {
        let namespace = PostgreSQLServer.freshNamespace("twophase")
        let container = try Self.container(postgreSQLFirst: postgreSQLFirst, namespace: namespace)
        let context = ModelContext(container)
        context.duplicateInsertPolicy = .error  // the other store refuses the duplicate rather than upserting
        context.insert(Member("ada@example.com"))
        context.insert(Counter(name: "kept"))
        try context.save()

        let counter = Counter(name: "refused")
        context.insert(counter)
        let duplicate = Member("ada@example.com")
        context.insert(duplicate)
        let error = #expect(throws: DataStoreError.self) { try context.save() }
        #expect(error?.code == .uniqueConstraintViolation)
        #expect(counter.persistentModelID.isTemporary)
        #expect(try ModelContext(container).fetch(FetchDescriptor<Counter>()).map(\.name) == ["kept"])
        #expect(try await Self.preparedTransactions(namespace).isEmpty, "an aborted save left a prepared transaction")

        // The store was released: the same save, corrected, stores both parts.
        duplicate.email = "grace@example.com"
        try context.save()
        let reader = ModelContext(container)
        #expect(
            try reader.fetch(FetchDescriptor<Counter>(sortBy: [SortDescriptor(\.name)])).map(\.name) == [
                "kept", "refused",
            ])
        #expect(try reader.fetchCount(FetchDescriptor<Member>()) == 2)
        #expect(try await Self.preparedTransactions(namespace).isEmpty, "a finished save left a prepared transaction")
    }

    @Test func aSaveAcrossStoresUpdatesAndDeletesOnTheServerAndKeepsConflictChecks() throws {
        let container = try Self.container(postgreSQLFirst: true)
        let context = ModelContext(container)
        let counter = Counter(name: "c")
        context.insert(counter)
        let gone = Counter(name: "gone")
        context.insert(gone)
        try context.save()

        // Another context changes the counter: the cross-store save of a stale read conflicts.
        let other = ModelContext(container)
        let theirs = try Self.counter("c", in: other)
        theirs.value = 5
        try other.save()
        counter.value = 1
        context.insert(Member("m@example.com"))
        let conflict = #expect(throws: DataStoreError.self) { try context.save() }
        #expect(conflict?.code == .conflict)
        #expect(try ModelContext(container).fetchCount(FetchDescriptor<Member>()) == 0)

        context.rollback()
        let fresh = ModelContext(container)
        let current = try Self.counter("c", in: fresh)
        current.value += 1
        fresh.delete(try Self.counter("gone", in: fresh))
        fresh.insert(Member("m@example.com"))
        try fresh.save()
        let reader = ModelContext(container)
        #expect(try reader.fetch(FetchDescriptor<Counter>()).map(\.value) == [6])
        #expect(try reader.fetchCount(FetchDescriptor<Member>()) == 1)
    }
}
