import Foundation
import Logging
import PostgresNIO

/// The statements the store runs often enough to have PostgreSQL keep them prepared on each pooled
/// connection: parsed, analysed and planned once per connection, then only bound and executed.
///
/// A statement's text gets a name (`modelstore_<n>`) the first time it is run prepared; PostgresNIO
/// prepares it on a connection the first time that connection runs it (one extra round trip), and
/// afterwards sends only its name and parameters. Each store's pool has its own names: the same
/// text has the same name on every connection of the pool.
///
/// ## Rules
/// 1. Only statements whose text does not depend on values (every value a parameter) are named,
///    and at most ``capacity`` of them, so a connection keeps a bounded number.
/// 2. A prepared statement's parameter types come from its text (the columns they are compared
///    with or assigned to, or explicit casts), not from the values, since the values of its first
///    run would otherwise fix them for good. A statement the server cannot type so, or whose
///    types do not fit the values bound later, or whose result changed shape (another process
///    altered the table), fails with one of ``refusingStates``: its text is then never named
///    again, and the failed call runs again unprepared (see ``RunUnprepared``).
/// 3. PostgresNIO remembers a failed preparation on the connection, and fails every later run of
///    that name there with the same error. So after any server error a prepared statement's
///    preparation could have caused (all but integrity violations and serialization failures,
///    which only running it causes: a lock or statement timeout, a table being altered), its text
///    gets a new name (``rename(_:)``), which the next run prepares afresh.
final class PreparedStatements: @unchecked Sendable {
    // Safety: `names`, `refused` and `next` are read and written only under `lock`.
    private let lock = NSLock()
    private var names: [String: String] = [:]
    private var refused: Set<String> = []
    private var next = 0

    /// How many texts of one pool get names; later ones run unprepared.
    static let capacity = 512

    /// The SQLSTATEs after which a text is no longer run prepared: undeterminable parameter type
    /// (`42P18`), binary value of another type than the prepared one (`22P03`, `42804`), and a
    /// cached plan whose result type changed (`0A000`).
    static let refusingStates: Set<String> = ["42P18", "22P03", "42804", "0A000"]

    /// The name to prepare `sql` under, or `nil` when it runs unprepared.
    func name(for sql: String) -> String? {
        lock.withLock {
            if let name = names[sql] { return name }
            guard names.count < Self.capacity, !refused.contains(sql) else { return nil }
            next += 1
            let name = "modelstore_\(next)"
            names[sql] = name
            return name
        }
    }

    /// Gives `sql` a new name at its next run (see rule 3).
    func rename(_ sql: String) {
        lock.withLock { names[sql] = nil }
    }

    /// Whether a server error of a prepared statement may have come from its preparation (rule 3).
    static func mayHaveFailedPreparing(_ sqlState: String) -> Bool {
        !sqlState.hasPrefix("23") && sqlState != "40001"
    }

    /// What a failure of the prepared statement `sql` means (rules 2 and 3): returns the error to
    /// throw, ``RunUnprepared`` after a refusal (the text now runs unprepared), else `error` (after
    /// one its preparation may have caused, the text gets a new name).
    func failed(_ sql: String, _ error: any Error) -> any Error {
        guard let state = (error as? PSQLError)?.serverInfo?[.sqlState] else { return error }
        if Self.refusingStates.contains(state) {
            refuse(sql)
            return RunUnprepared(underlying: error)
        }
        if Self.mayHaveFailedPreparing(state) { rename(sql) }
        return error
    }

    /// The texts that have a name (run prepared) and contain `fragment` (for tests).
    func named(containing fragment: String) -> [String] {
        lock.withLock { names.keys.filter { $0.contains(fragment) }.sorted() }
    }

    /// The texts that run unprepared after a refusal whose text contains `fragment` (for tests).
    func refused(containing fragment: String) -> [String] {
        lock.withLock { refused.filter { $0.contains(fragment) }.sorted() }
    }

    /// Runs `sql` unprepared from now on (see rule 2).
    func refuse(_ sql: String) {
        lock.withLock {
            names[sql] = nil
            refused.insert(sql)
        }
    }
}

/// A statement with a name and text chosen at run time, for PostgresNIO's prepared-statement API
/// (which takes them from the statement's type): both come from the task-local ``text``, read by
/// `PostgresConnection.execute(_:logger:)` in the calling task before it returns.
struct NamedStatement: PostgresPreparedStatement {
    typealias Row = PostgresRow

    /// A prepared statement's name and SQL.
    struct Text: Sendable {
        let name: String
        let sql: String
    }

    /// The statement the current task runs.
    @TaskLocal static var text = Text(name: "", sql: "")

    static var name: String { text.name }
    static var sql: String { text.sql }

    let bindings: PostgresBindings

    func makeBindings() -> PostgresBindings { bindings }
    func decodeRow(_ row: PostgresRow) -> PostgresRow { row }
}

/// A prepared statement the server refused for its types or shape (see rule 2 of
/// ``PreparedStatements``): its text now runs unprepared, and the caller runs its work again
/// (a read at once, a transaction from its start, since the failure aborted it).
struct RunUnprepared: Error {
    let underlying: any Error
}
