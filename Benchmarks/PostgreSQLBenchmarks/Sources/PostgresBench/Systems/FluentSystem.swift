import FluentKit
import FluentPostgresDriver
import Foundation
import NIOPosix

/// A "simple user" as a Fluent model, with the same columns as the ModelStore model's table.
///
/// Safety: Fluent's models are classes with property wrappers and no lock (Fluent's own guidance is
/// `@unchecked Sendable`); each benchmark uses a model from one task at a time.
final class FluentUser: Model, @unchecked Sendable {
    static let schema = "users"

    @ID(custom: "id", generatedBy: .database) var id: Int?
    @Field(key: "name") var name: String
    @Field(key: "age") var age: Int
    @Field(key: "email") var email: String
    @Field(key: "joined") var joined: Date
    @Field(key: "score") var score: Double

    init() {}

    init(_ row: UserRow) {
        name = row.name
        age = row.age
        email = row.email
        joined = row.joined
        score = row.score
    }

    var row: UserRow { UserRow(name: name, age: age, email: email, joined: joined, score: score) }
}

/// Fluent 4 with `fluent-postgres-driver`, doing the same work through its models and query builder,
/// on the pool a Vapor app configures (`.postgres(configuration:)`, one connection per event loop).
struct FluentSystem: BenchSystem {
    /// Rows per `INSERT` of a bulk create: PostgreSQL takes at most 65,535 parameters, 5 per row here.
    static let insertChunk = 10_000

    func notApplicable(_ workload: Workload) -> String? { nil }

    /// Fluent's databases over the namespace (as the search path), and a database to query.
    private final class Session: @unchecked Sendable {
        // Safety: set once in init and only read afterwards; `Databases` and `Database` are Sendable.
        let databases: Databases
        let database: any Database

        init(namespace: String) throws {
            databases = Databases(threadPool: NIOThreadPool.singleton, on: MultiThreadedEventLoopGroup.singleton)
            databases.use(
                .postgres(
                    configuration: SQLPostgresConfiguration(
                        coreConfiguration: try Server.configuration(),
                        searchPath: [namespace])), as: .psql)
            guard let database = databases.database(logger: Server.logger, on: databases.eventLoopGroup.any()) else {
                throw WrongResult("Fluent: no database configured")
            }
            self.database = database
        }

        func shutdown() async { await databases.shutdownAsync() }
    }

    /// Creates the users table with Fluent's schema builder; the index on name with SQL, as a Fluent user must.
    private func createTable(_ session: Session) async throws {
        try await session.database.schema(FluentUser.schema)
            .field("id", .int64, .identifier(auto: true))
            .field("name", .string, .required)
            .field("age", .int64, .required)
            .field("email", .string, .required)
            .unique(on: "email")
            .field("joined", .datetime, .required)
            .field("score", .double, .required)
            .create()
        guard let sql = session.database as? any SQLDatabase else { throw WrongResult("Fluent: not an SQL database") }
        try await sql.raw("CREATE INDEX users_name ON users (name)").run()
    }

    /// Stores the users in one transaction, in bulk creates of ``insertChunk`` rows.
    private static func create(_ users: [FluentUser], on database: any Database) async throws {
        try await database.transaction { transaction in
            var start = 0
            while start < users.count {
                let end = min(start + insertChunk, users.count)
                try await Array(users[start..<end]).create(on: transaction)
                start = end
            }
        }
    }

    private func emptySession(_ namespace: String) async throws -> Session {
        try await Server.createNamespace(namespace)
        let session = try Session(namespace: namespace)
        try await createTable(session)
        return session
    }

    private func filledSession(_ data: Dataset, _ namespace: String) async throws -> Session {
        let session = try await emptySession(namespace)
        try await Self.create(data.rows.map(FluentUser.init), on: session.database)
        return session
    }

    func trial(_ workload: Workload, data: Dataset, namespace: String) async throws -> Trial {
        switch workload {
        case .insert:
            let session = try await emptySession(namespace)
            let database = session.database
            return Trial(
                path: "FluentUser models, [Model].create(on:) in chunks of 10k, one transaction",
                prepare: { _ in
                    guard let sql = database as? any SQLDatabase else { throw WrongResult("not SQL") }
                    try await sql.raw("TRUNCATE users RESTART IDENTITY").run()
                },
                run: { _ in
                    let users = data.rows.map(FluentUser.init)
                    try await Self.create(users, on: database)
                    return users.count
                },
                check: { inserted, _ in
                    try Expect.count(inserted, data.count, "insert")
                    try Expect.count(try await FluentUser.query(on: database).count(), data.count, "insert, counted")
                }, finish: { await session.shutdown() })
        case .fetchIndexed:
            let session = try await filledSession(data, namespace)
            return Trial(
                path: "FluentUser.query.filter(\\.$name == \"Jane\").sort(\\.$age).all()",
                run: { _ in
                    try await FluentUser.query(on: session.database).filter(\.$name == Dataset.indexedName)
                        .sort(\.$age).all()
                },
                check: { users, _ in try Expect.indexed(names: users.map(\.name), ages: users.map(\.age), of: data) },
                finish: { await session.shutdown() })
        case .fetchUnique:
            let session = try await filledSession(data, namespace)
            return Trial(
                path: "FluentUser.query.filter(\\.$email == x).first()",
                run: { repetition in
                    let email = data.rows[data.lookupTarget(repetition)].email
                    return try await FluentUser.query(on: session.database).filter(\.$email == email).first()
                        .map { [$0] } ?? []
                },
                check: { users, repetition in
                    try Expect.unique(emails: users.map(\.email), repetition: repetition, of: data)
                }, finish: { await session.shutdown() })
        case .fetchScan:
            let session = try await filledSession(data, namespace)
            return Trial(
                path: "FluentUser.query.filter(age >= 65).filter(score >= 900).filter(joined < t).all()",
                run: { _ in
                    try await FluentUser.query(on: session.database).filter(\.$age >= Dataset.scanMinimumAge)
                        .filter(\.$score >= Dataset.scanMinimumScore).filter(\.$joined < Dataset.scanJoinedBefore)
                        .all()
                },
                check: { users, _ in try Expect.scan(users.map(\.row), of: data) },
                finish: { await session.shutdown() })
        case .updateOne:
            let session = try await filledSession(data, namespace)
            let database = session.database
            var user: FluentUser?
            return Trial(
                path: "change one found model, model.save(on:) (UPDATE by id)",
                prepare: { repetition in
                    user = try await FluentUser.find(data.lookupTarget(repetition) + 1, on: database)
                    if user?.email != data.rows[data.lookupTarget(repetition)].email {
                        throw WrongResult("update-one: the user to change is missing")
                    }
                },
                run: { repetition in
                    user!.score = Double(repetition) + 0.5
                    try await user!.save(on: database)
                    return user!.id!
                },
                check: { id, repetition in
                    let stored = try await FluentUser.find(id, on: database)
                    if stored?.score != Double(repetition) + 0.5 {
                        throw WrongResult("update-one: the change was not stored")
                    }
                }, finish: { await session.shutdown() })
        case .open:
            let session = try await filledSession(data, namespace)
            await session.shutdown()
            return Trial(
                path: "Databases + .postgres(configuration:) (connect) + FluentUser.query.all()",
                run: { _ in
                    let opened = try Session(namespace: namespace)
                    return (opened, try await FluentUser.query(on: opened.database).all())
                },
                check: { opened, _ in
                    await opened.0.shutdown()
                    try Expect.count(opened.1.count, data.count, "open")
                })
        case .deleteAll:
            let session = try await emptySession(namespace)
            let database = session.database
            return Trial(
                path: "FluentUser.query(on:).delete() (one DELETE)",
                prepare: { _ in
                    guard let sql = database as? any SQLDatabase else { throw WrongResult("not SQL") }
                    try await sql.raw("TRUNCATE users RESTART IDENTITY").run()
                    try await Self.create(data.rows.map(FluentUser.init), on: database)
                },
                run: { _ in try await FluentUser.query(on: database).delete() },
                check: { _, _ in try Expect.count(try await FluentUser.query(on: database).count(), 0, "delete-all") },
                finish: { await session.shutdown() })
        }
    }
}
