import Foundation
import Logging
import ModelStore
import NIOCore
import NIOPosix
import NIOSSL
import PostgresNIO
import Synchronization

/// The store's connection pool (PostgresNIO's `PostgresClient`), the task that runs it, and
/// transactions with retries.
final class Database: Sendable {
    let client: PostgresClient
    /// The store's URL without its password (``PostgreSQLStoreConfiguration/redactedURL``), made
    /// once: the store's calls name it in their errors and hand it to their readers and writers.
    let url: String
    private let runner: Task<Void, Never>
    private let retries: Int
    /// The statements kept prepared on the store's connections.
    let statements = PreparedStatements()
    /// The connection kept outside the pool, which every call takes when no other call has it (see
    /// ``withConnection(_:)``); `nil` when the configuration allows a single connection, which is
    /// then the pool's.
    let autocommitConnection: AutocommitConnection?

    init(_ configuration: PostgreSQLStoreConfiguration) {
        var client: PostgresClient.Configuration
        if let socket = configuration.unixSocketPath {
            client = PostgresClient.Configuration(
                unixSocketPath: socket, username: configuration.username, password: configuration.password,
                database: configuration.database)
        } else {
            let tls: PostgresClient.Configuration.TLS =
                switch configuration.tls {
                case .disable: .disable
                case .prefer: .prefer(Self.tlsConfiguration(configuration))
                case .require: .require(Self.tlsConfiguration(configuration))
                }
            client = PostgresClient.Configuration(
                host: configuration.host, port: configuration.port, username: configuration.username,
                password: configuration.password, database: configuration.database, tls: tls)
        }
        // The kept connection counts against the maximum.
        let keepsOwnConnection = configuration.maximumConnections >= 2
        client.options.maximumConnections = configuration.maximumConnections - (keepsOwnConnection ? 1 : 0)
        // One connection stays open for the store's life: the kept one, or else one of the pool's
        // (the pool gives the connections beyond its minimum an idle timer each time they are
        // released, and cancels it when they are leased again, which wakes the pool's own task twice
        // for every statement; with a kept connection, the pool serves only calls that find it taken).
        client.options.minimumConnections = keepsOwnConnection ? 0 : min(1, configuration.maximumConnections)
        client.options.connectTimeout = configuration.connectTimeout
        client.options.keepAliveBehavior = nil
        if let timeout = configuration.statementTimeout {
            client.options.additionalStartupParameters = [("statement_timeout", Self.statementTimeout(timeout))]
        }
        let pool = PostgresClient(configuration: client, backgroundLogger: Self.silent)
        self.client = pool
        url = configuration.redactedURL
        retries = max(configuration.serializationRetries, 0)
        runner = Task(executorPreference: BridgeExecutor.shared) { await pool.run() }
        autocommitConnection =
            keepsOwnConnection ? AutocommitConnection(open: { try await Self.connect(configuration) }) : nil
    }

    deinit {
        runner.cancel()
        autocommitConnection?.close()
    }

    /// Opens and closes one connection outside the pool, so an unreachable server or refused
    /// credentials fail the open at once with the cause, instead of after the pool's retries.
    static func probe(_ configuration: PostgreSQLStoreConfiguration) async throws {
        let opened = try await connect(configuration)
        try? await opened.close()
    }

    /// Opens the store's first connection, so an unreachable server or refused credentials fail the
    /// open at once with the cause, instead of after the pool's retries; keeps it as the kept
    /// connection (see ``autocommitConnection``), else closes it.
    func connectFirst(_ configuration: PostgreSQLStoreConfiguration) async throws {
        let opened = try await Self.connect(configuration)
        if autocommitConnection?.adopt(opened) != true { try? await opened.close() }
    }

    /// Opens one connection outside the pool, with the configuration's TLS settings and statement
    /// timeout; errors become `DataStoreError`s naming the cause.
    static func connect(_ configuration: PostgreSQLStoreConfiguration) async throws -> PostgresConnection {
        var options = PostgresConnection.Configuration.Options()
        options.connectTimeout = TimeAmount.nanoseconds(
            configuration.connectTimeout.components.seconds * 1_000_000_000
                + configuration.connectTimeout.components.attoseconds / 1_000_000_000)
        var connection: PostgresConnection.Configuration
        if let socket = configuration.unixSocketPath {
            connection = PostgresConnection.Configuration(
                unixSocketPath: socket, username: configuration.username, password: configuration.password,
                database: configuration.database)
        } else {
            let tls: PostgresConnection.Configuration.TLS
            do {
                switch configuration.tls {
                case .disable: tls = .disable
                case .prefer: tls = .prefer(try NIOSSLContext(configuration: tlsConfiguration(configuration)))
                case .require: tls = .require(try NIOSSLContext(configuration: tlsConfiguration(configuration)))
                }
            } catch {
                throw DataStoreError(
                    .invalidConfiguration,
                    "the TLS settings of the PostgreSQL store '\(configuration.redactedURL)' cannot be used: "
                        + "the root certificates '\(configuration.tlsRootCertificatePath ?? "system")' do not load",
                    remedy: "Point sslrootcert at a readable PEM file of CA certificates", underlyingError: error)
            }
            connection = PostgresConnection.Configuration(
                host: configuration.host, port: configuration.port, username: configuration.username,
                password: configuration.password, database: configuration.database, tls: tls)
        }
        if let timeout = configuration.statementTimeout {
            options.additionalStartupParameters = [("statement_timeout", statementTimeout(timeout))]
        }
        connection.options = options
        do {
            return try await PostgresConnection.connect(configuration: connection, id: 0, logger: silent)
        } catch {
            throw ModelStoreErrors.translate(error, doing: "connecting", url: configuration.redactedURL)
        }
    }

    /// The value of the `statement_timeout` setting for `timeout`: whole milliseconds, at least one.
    static func statementTimeout(_ timeout: Duration) -> String {
        let milliseconds = timeout.components.seconds * 1000 + timeout.components.attoseconds / 1_000_000_000_000_000
        return "\(max(milliseconds, 1))"
    }

    /// The client TLS settings: full verification of the server's certificate and name, against
    /// the configuration's root certificates if it names some, else the system's.
    static func tlsConfiguration(_ configuration: PostgreSQLStoreConfiguration) -> TLSConfiguration {
        var tls = TLSConfiguration.makeClientConfiguration()
        if let roots = configuration.tlsRootCertificatePath { tls.trustRoots = .file(roots) }
        return tls
    }

    /// Stops the pool and closes the connection kept for statements outside transactions: every
    /// connection closes.
    func close() {
        runner.cancel()
        autocommitConnection?.close()
    }

    /// A logger that logs nothing: the store never logs connection details or credentials.
    static let silent = Logger(label: "ModelStorePostgreSQL", factory: { _ in SwiftLogNoOpLogHandler() })

    /// Runs `body` synchronously on the calling thread (see ``BridgeExecutor``).
    func wait<Value: Sendable>(_ body: @escaping @Sendable () async throws -> Value) throws -> Value {
        try BridgeExecutor.shared.wait(for: body, storeURL: url)
    }

    /// Runs `body` synchronously on the calling thread, lent to it for synchronous code too (see
    /// ``WaitingThread``).
    func wait<Value: Sendable>(lending body: @escaping @Sendable (WaitingThread) async throws -> Value) throws -> Value
    {
        try BridgeExecutor.shared.wait(lending: body, storeURL: url)
    }

    /// Runs `body` in one transaction, again (up to the configured number of times) after a
    /// serialization failure or a deadlock; errors become `DataStoreError`s saying what failed.
    func transaction<Value: Sendable>(
        _ doing: String, isolation: String = "READ COMMITTED",
        _ body: @escaping @Sendable (Session) async throws -> Value
    ) async throws -> Value {
        do {
            return try await transactionTellingUnknown(doing, isolation: isolation, body)
        } catch let unknown as CommitOutcomeUnknown {
            throw ModelStoreErrors.commitOutcomeUnknown(doing, url: url, underlying: unknown.underlying)
        }
    }

    /// As ``transaction(_:isolation:_:)``, but a transaction whose connection ended during its
    /// `COMMIT`, and whose fate the server cannot tell, throws ``CommitOutcomeUnknown``: every other
    /// error thrown means that nothing was committed.
    func transactionTellingUnknown<Value: Sendable>(
        _ doing: String, isolation: String = "READ COMMITTED",
        _ body: @escaping @Sendable (Session) async throws -> Value
    ) async throws -> Value {
        var attempt = 0
        while true {
            do {
                return try await withConnection { [self] connection in
                    let session = Session(connection: connection, statements: statements)
                    let value = try await Self.begin("BEGIN ISOLATION LEVEL \(isolation)", session, body)
                    switch session.closing.state {
                    case .committed:
                        await session.runAfterCommit()
                        return value
                    case .inDoubt(let error):
                        throw CommitInDoubt(transaction: session.transactionID.get(), value: value, underlying: error)
                    case .rolledBack:
                        // A body that caught the failure of the statement that carried the COMMIT.
                        throw DataStoreError(
                            .io, "\(doing) on the PostgreSQL store '\(url)' was rolled back",
                            remedy: "Report this as a bug of ModelStorePostgreSQL, and try again")
                    case .open:
                        break
                    }
                    // The transaction's id, to learn its fate if the connection ends during COMMIT (a
                    // statement of the body may have read it already).
                    let transaction: Int64?
                    if let known = session.transactionID.get() {
                        transaction = known
                    } else {
                        transaction = try await session.integer("SELECT txid_current()")
                    }
                    do {
                        try await session.execute("COMMIT")
                    } catch  where ModelStoreErrors.endsTheConnection(error) {
                        // The connection ended after COMMIT may have reached the server: running the
                        // transaction again could store it twice, so ask the server what became of it.
                        throw CommitInDoubt(transaction: transaction, value: value, underlying: error)
                    }
                    await session.runAfterCommit()
                    return value
                }
            } catch let doubt as CommitInDoubt {
                switch await status(of: doubt.transaction) {
                case "committed":
                    if let value = doubt.value as? Value { return value }
                    throw CommitOutcomeUnknown(underlying: doubt.underlying, value: doubt.value)
                case "aborted":
                    throw ModelStoreErrors.translate(doubt.underlying, doing: doing, url: url)
                default:
                    throw CommitOutcomeUnknown(underlying: doubt.underlying, value: doubt.value)
                }
            } catch is RunUnprepared {
                // Again from the start: the refused text now runs unprepared, and each retry
                // refuses another text, so the retries end.
                continue
            } catch is RunAgain {
                // Again from the start, without what the server refused (see `RunAgain`).
                continue
            } catch let never as NeverBegun {
                guard attempt < retries else { throw ModelStoreErrors.translate(never, doing: doing, url: url) }
                attempt += 1
                // A moment for the pool to see the connection closed, so it lends another.
                try? await Task.sleep(for: .milliseconds(20 * attempt))
                continue
            } catch {
                if ModelStoreErrors.isRetryable(error) && attempt < retries {
                    attempt += 1
                    continue
                }
                throw ModelStoreErrors.translate(error, doing: doing, url: url)
            }
        }
    }

    /// What the server says became of a transaction (`committed`, `aborted`), asked on another
    /// connection; `nil` when it cannot say (no id, the server unreachable, or still in progress
    /// after a few seconds: a terminated backend ends its transaction within moments).
    private func status(of transaction: Int64?) async -> String? {
        guard let transaction else { return nil }
        for _ in 0..<50 {
            var binds = PostgresBindings()
            binds.append(transaction)
            let status = try? await client.withConnection { [binds] connection in
                let rows = try await Session(connection: connection).query("SELECT txid_status($1)", binds)
                return try rows.first?.decode(String?.self)
            }
            guard let status else { return nil }
            if status != "in progress" { return status }
            try? await Task.sleep(for: .milliseconds(100))
        }
        return nil
    }

    /// Begins a transaction with `begin` and runs `body` in it; when `body` throws, rolls back.
    private static func begin<Value: Sendable>(
        _ begin: String, _ session: Session, _ body: @Sendable (Session) async throws -> Value
    ) async throws -> Value {
        // Sent with the body's first statement (see `Session.Opening`), so it costs no wait of its own.
        session.opening.set(begin)
        do {
            return try await body(session)
        } catch {
            // A connection the server dropped cannot roll back; the server already did, and the
            // session does not write to a closed connection. A transaction never begun needs none.
            let pending = session.opening.take()
            if ["57P", "08"].contains(where: { ModelStoreErrors.sqlState(error)?.hasPrefix($0) == true }) {
                // The server said it ends the connection: closed now, so the pool lends it to no one
                // before it notices (a save run again at once would otherwise fail on it).
                if !session.connection.isClosed { try? await session.connection.close() }
            } else if pending == nil && !session.connection.isClosed && session.closing.isOpen {
                _ = try? await session.execute("ROLLBACK")
            }
            // The pool lent a connection that had closed (ended by the server, and not yet noticed):
            // nothing was sent, so the transaction can run on another.
            if pending == begin, error is ConnectionClosed { throw NeverBegun(underlying: error) }
            throw error
        }
    }

    /// Runs `body` in a transaction that is always rolled back (a dry run); errors become
    /// `DataStoreError`s saying what failed.
    func rolledBack<Value: Sendable>(
        _ doing: String, _ body: @escaping @Sendable (Session) async throws -> Value
    ) async throws -> Value {
        do {
            return try await withConnection { [self] connection in
                let session = Session(connection: connection, statements: statements)
                let value = try await Self.begin("BEGIN", session, body)
                try await session.execute("ROLLBACK")
                return value
            }
        } catch {
            throw ModelStoreErrors.translate(error, doing: doing, url: url)
        }
    }

    /// Runs `body` on one connection outside a transaction (reads see committed data).
    func read<Value: Sendable>(
        _ doing: String, _ body: @escaping @Sendable (Session) async throws -> Value
    ) async throws -> Value {
        var attempt = 0
        while true {
            do {
                return try await autocommit(body)
            } catch {
                // A read changes nothing, so one whose pooled connection had already ended (the
                // server terminated or restarted it, and the pool has not noticed yet) runs once
                // more, on a connection the pool opens in its place.
                if attempt == 0 && !(error is DataStoreError) && ModelStoreErrors.endsTheConnection(error) {
                    attempt += 1
                    continue
                }
                throw ModelStoreErrors.translate(error, doing: doing, url: url)
            }
        }
    }
}

extension Database {
    /// Runs `body` on one connection outside a transaction, so each of its statements commits on
    /// its own (see ``OneStatementUpdate``); again from the start when the server refused a prepared
    /// text (which then ran not at all). Other errors are passed on untranslated: the caller tells a
    /// statement that stored nothing from one whose outcome the connection's end left unknown.
    ///
    func autocommit<Value: Sendable>(_ body: @escaping @Sendable (Session) async throws -> Value) async throws -> Value
    {
        while true {
            do {
                return try await withConnection { [self] connection in
                    try await body(Session(connection: connection, statements: statements))
                }
            } catch is RunUnprepared {
                continue
            }
        }
    }

    /// Runs `body` on the connection the store keeps (``AutocommitConnection``) when no other call
    /// has it, else on one leased from the pool: taking the kept one costs a lock, where a lease
    /// costs the pool's bookkeeping.
    private func withConnection<Value: Sendable>(
        _ body: @escaping @Sendable (PostgresConnection) async throws -> Value
    ) async throws -> Value {
        guard let own = autocommitConnection, let connection = own.take() else {
            return try await client.withConnection { connection in try await body(connection) }
        }
        do {
            let value = try await body(connection)
            own.handBack(connection, after: nil)
            return value
        } catch {
            // A connection that ended during a COMMIT is dropped, as one that ended elsewhere.
            own.handBack(connection, after: (error as? CommitInDoubt)?.underlying ?? error)
            throw error
        }
    }
}

/// One leased connection: statements with parameters, rows collected.
struct Session: @unchecked Sendable {
    // Safety: a session lives only inside the closure its connection was leased for, used by one task.
    let connection: PostgresConnection
    /// The names of the statements kept prepared on the store's connections; `nil` on a connection
    /// of its own (a test's, a probe's), where ``query(prepared:_:)`` runs statements unprepared.
    var statements: PreparedStatements? = nil
    /// What the session's statements tell each other (see ``Shared``): one object for the four
    /// below, made once per session (a read makes one session per fetch).
    private let shared = Shared()
    /// The id of the session's transaction (`txid_current()`), when a statement has read it.
    var transactionID: TransactionID { TransactionID(shared: shared) }
    /// Statements to run on the connection once the transaction has committed (see ``AfterCommit``).
    var afterCommit: AfterCommit { AfterCommit(shared: shared) }
    /// The `BEGIN` the session's next statement sends first (see ``Opening``).
    var opening: Opening { Opening(shared: shared) }
    /// How the transaction ended, when a statement of the body carried its `COMMIT` (see ``Closing``).
    var closing: Closing { Closing(shared: shared) }

    /// The state behind ``opening``, ``closing``, ``transactionID`` and ``afterCommit``, under one
    /// lock.
    fileprivate final class Shared: Sendable {
        struct Fields {
            var opening: String?
            var closing = Closing.State.open
            var transactionID: Int64?
            var afterCommit: [String] = []
        }

        let fields = Mutex(Fields())
    }

    /// A transaction's `BEGIN`, sent right before the transaction's first statement, without
    /// waiting for its answer: PostgresNIO runs a connection's statements in the order they were
    /// written, so the statement runs in the transaction, and the transaction costs no wait of its
    /// own (the server still answers `BEGIN` before PostgresNIO sends the statement: it runs one
    /// statement at a time). `BEGIN` has no operands and cannot fail on a live connection; its answer
    /// is still checked after the statement's (a failure is the statement's failure).
    struct Opening {
        fileprivate let shared: Shared
        func set(_ sql: String) { shared.fields.withLock { $0.opening = sql } }

        /// Removes and returns the pending `BEGIN`, if it was not sent yet.
        func take() -> String? {
            shared.fields.withLock { fields in
                defer { fields.opening = nil }
                return fields.opening
            }
        }
    }

    /// How a statement that carried the transaction's `COMMIT` (``queryCommitting(_:_:)``) ended
    /// it: ``Database`` then commits no more, or asks the server what became of the transaction.
    struct Closing {
        enum State {
            /// No statement carried the `COMMIT`: the transaction is open.
            case open
            /// The server committed the transaction.
            case committed
            /// The transaction ended without a commit (the statement failed, or the `COMMIT` did).
            case rolledBack
            /// The statement was answered and its connection ended before the `COMMIT`'s answer,
            /// with this error: the server may or may not have committed.
            case inDoubt(any Error)
        }

        fileprivate let shared: Shared
        var state: State { shared.fields.withLock { $0.closing } }
        var isOpen: Bool { if case .open = state { true } else { false } }
        func set(_ state: State) { shared.fields.withLock { $0.closing = state } }
    }

    /// The id of a session's transaction, kept by the statement that read it for the commit.
    struct TransactionID {
        fileprivate let shared: Shared
        func set(_ id: Int64) { shared.fields.withLock { $0.transactionID = id } }
        func get() -> Int64? { shared.fields.withLock { $0.transactionID } }
    }

    /// Statements a transaction asks to run after its commit, on its connection, outside any
    /// transaction: maintenance that must not hold locks until the commit (an `ANALYZE` of a table
    /// a save filled), whose failure does not undo the committed save. Each statement runs once.
    struct AfterCommit {
        fileprivate let shared: Shared

        /// Adds a statement (once, however often it is added).
        func add(_ sql: String) {
            shared.fields.withLock { if !$0.afterCommit.contains(sql) { $0.afterCommit.append(sql) } }
        }

        /// Removes and returns the statements added so far.
        func take() -> [String] {
            shared.fields.withLock { fields in
                defer { fields.afterCommit = [] }
                return fields.afterCommit
            }
        }
    }

    /// Runs the statements of ``afterCommit``; a failure is ignored (the save has committed, and the
    /// statements only maintain).
    func runAfterCommit() async {
        for sql in afterCommit.take() where !connection.isClosed { _ = try? await execute(sql) }
    }

    /// Runs a statement and returns its rows.
    ///
    /// Fails with ``ConnectionClosed`` as soon as the connection closes, even when PostgresNIO
    /// would never answer: a query written to a channel whose handlers NIO already removed
    /// (which it does when the channel closes) is dropped with its promise, and waiting for it
    /// would wait forever. The statement's future is answered on the connection's event loop,
    /// which resumes the caller directly (no task in between, as a prepared statement needs, see
    /// ``collect(_:)``).
    @discardableResult
    func query(_ sql: String, _ binds: PostgresBindings = PostgresBindings()) async throws -> [PostgresRow] {
        try await run(sql, binds) { $0.rows }
    }

    /// Runs a statement and returns `outcome` of its result (see ``query(_:_:)``).
    private func run<Value: Sendable>(
        _ sql: String, _ binds: PostgresBindings, _ outcome: @escaping @Sendable (PostgresQueryResult) -> Value
    ) async throws -> Value {
        try await answer { connection, begin, finish in
            // Both written from this thread, so the BEGIN reaches the server first (see `Opening`).
            let begun = begin.map { connection.query(PostgresQuery(unsafeSQL: $0), logger: Database.silent) }
            let answer = connection.query(PostgresQuery(unsafeSQL: sql, binds: binds), logger: Database.silent)
            (begun.map { $0.and(answer).map(\.1) } ?? answer).whenComplete { finish($0.map(outcome)) }
        }
    }

    /// Runs a statement kept prepared on the connection (see ``PreparedStatements``) and returns
    /// its rows; as ``query(_:_:)`` once its text is refused or there are too many.
    ///
    /// Every value must be a parameter, and each parameter's type must follow from the text (see
    /// rule 2 of ``PreparedStatements``). Throws ``RunUnprepared`` when the server refuses the
    /// prepared statement for its types or shape: ``Database`` then runs the read or the
    /// transaction again, and the text runs unprepared.
    @discardableResult
    func query(prepared sql: String, _ binds: PostgresBindings) async throws -> [PostgresRow] {
        guard let statements, let name = statements.name(for: sql) else { return try await query(sql, binds) }
        do {
            return try await collect { connection in
                try await Self.execute(NamedStatement.Text(name: name, sql: sql), binds, on: connection)
            }
        } catch {
            throw statements.failed(sql, error)
        }
    }

    /// Runs the statement `text` names, prepared on `connection` (PostgresNIO prepares it there the
    /// first time), and returns its rows; from a task on the connection's event loop.
    private static func execute(
        _ text: NamedStatement.Text, _ binds: PostgresBindings, on connection: PostgresConnection
    ) async throws -> [PostgresRow] {
        try await NamedStatement.$text.withValue(text) {
            var result: [PostgresRow] = []
            let rows = try await connection.execute(NamedStatement(bindings: binds), logger: Database.silent)
            for try await row in rows { result.append(row) }
            return result
        }
    }

    /// Runs `body` on the connection in a task on the connection's own event loop (see
    /// ``EventLoopTaskExecutor``), and returns what it collects; fails with ``ConnectionClosed`` as
    /// soon as the connection closes (see ``query(_:_:)``), while `body`'s task, if PostgresNIO never
    /// answers it, stays suspended holding no connection, lock or thread.
    private func collect(
        _ body: @escaping @Sendable (PostgresConnection) async throws -> [PostgresRow]
    ) async throws -> [PostgresRow] {
        try await onLoop { connection, begin in
            // Written before the statement, from this thread, so it reaches the server first.
            let begun = begin.map { connection.query(PostgresQuery(unsafeSQL: $0), logger: Database.silent) }
            let rows = try await body(connection)
            _ = try await begun?.get()
            return rows
        }
    }

    /// Runs `body` as ``collect(_:)`` does, with the pending `BEGIN` for it to write first (see
    /// ``Opening``), and returns its value.
    private func onLoop<Value: Sendable>(
        _ body: @escaping @Sendable (PostgresConnection, String?) async throws -> Value
    ) async throws -> Value {
        try await answer { connection, begin, finish in
            Task(executorPreference: EventLoopTaskExecutor(connection.eventLoop)) {
                do {
                    finish(.success(try await body(connection, begin)))
                } catch {
                    finish(.failure(error))
                }
            }
        }
    }

    /// Starts a statement with `start` (given the connection, the pending `BEGIN` to write first,
    /// and the callback for its outcome) and waits for its outcome, or for the connection to close,
    /// whichever comes first.
    private func answer<Value: Sendable>(
        _ start: (
            PostgresConnection, String?, @escaping @Sendable (Result<Value, any Error>) -> Void
        ) -> Void
    ) async throws -> Value {
        let connection = connection
        if connection.isClosed { throw ConnectionClosed() }
        let begin = opening.take()
        let outcome = FirstOutcome<Value>()
        return try await withCheckedThrowingContinuation { continuation in
            outcome.start(continuation)
            let watch = CloseWatch.shared.watch(connection) { outcome.finish(.failure(ConnectionClosed())) }
            start(connection, begin) { result in
                CloseWatch.shared.forget(watch, on: connection)
                outcome.finish(result)
            }
        }
    }

    /// Runs a statement and returns how many rows it changed, from its answer's command tag
    /// (`DELETE 10000`); as ``query(_:_:)`` otherwise.
    func changedRows(_ sql: String, _ binds: PostgresBindings = PostgresBindings()) async throws -> Int {
        try await run(sql, binds) { $0.metadata.rows ?? 0 }
    }

    /// One statement of ``run(together:)``: its text and parameters, and whether it is kept prepared
    /// (see ``query(prepared:_:)``; its parameters typed as rule 2 of ``PreparedStatements`` says).
    struct Queued: Sendable {
        let sql: String
        var binds = PostgresBindings()
        var prepared = false
    }

    /// What one statement of ``run(together:)`` answered: its rows, and how many rows it changed
    /// (from its command tag, `DELETE 10000`; `0` for a statement that names none).
    struct Answered: Sendable {
        let rows: [PostgresRow]
        let changed: Int
    }

    /// Runs `statements` one after another on the connection, written to it all at once (after the
    /// pending `BEGIN`, see ``Opening``), and waits once for all their answers, in order: the caller
    /// pays one wait instead of one per statement. PostgresNIO still sends each statement when the
    /// one before it has been answered, so the server runs them in order, each seeing what the
    /// ones before it wrote.
    ///
    /// When one fails, so do the ones after it in the same transaction (the server refuses every
    /// statement of an aborted transaction until it is rolled back): the error thrown is the first
    /// statement's that failed, which is the cause.
    ///
    /// Statements kept prepared (``Queued/prepared``) MUST come after every other one: PostgresNIO
    /// runs a prepared statement only as an `async` call, so they are written one after another
    /// from a task on the connection's event loop, after the others (see ``runPreparedLast(_:)``).
    /// A prepared statement's command tag does not come back, so its ``Answered/changed`` is `0`.
    func run(together statements: [Queued]) async throws -> [Answered] {
        if let names = self.statements, statements.contains(where: \.prepared) {
            return try await runPreparedLast(statements, names)
        }
        return try await answer { connection, begin, finish in
            // Written from this thread in order, so they reach the server in that order.
            var answers: [EventLoopFuture<PostgresQueryResult>] = []
            answers.reserveCapacity(statements.count + 1)
            if let begin { answers.append(connection.query(PostgresQuery(unsafeSQL: begin), logger: Database.silent)) }
            let first = answers.count
            for statement in statements {
                answers.append(
                    connection.query(
                        PostgresQuery(unsafeSQL: statement.sql, binds: statement.binds), logger: Database.silent))
            }
            EventLoopFuture.whenAllComplete(answers, on: connection.eventLoop).whenComplete { all in
                do {
                    var answered: [Answered] = []
                    answered.reserveCapacity(statements.count)
                    for (index, outcome) in try all.get().enumerated() {
                        let result = try outcome.get()
                        if index >= first {
                            answered.append(Answered(rows: result.rows, changed: result.metadata.rows ?? 0))
                        }
                    }
                    finish(.success(answered))
                } catch {
                    finish(.failure(error))
                }
            }
        }
    }

    /// ``run(together:)`` with prepared statements at the end: the others are written at once, the
    /// prepared ones then in order from one task on the connection's event loop, each when the one
    /// before it has been answered (which is when PostgresNIO would send it anyway). After a
    /// failure nothing more is sent: the statements after it could only fail for it.
    private func runPreparedLast(_ statements: [Queued], _ names: PreparedStatements) async throws -> [Answered] {
        let split = statements.firstIndex(where: \.prepared) ?? statements.count
        precondition(!statements[split...].contains { !$0.prepared }, "prepared statements go last")
        return try await onLoop { connection, begin in
            // Written at once, in order, so they reach the server in that order.
            let begun = begin.map { connection.query(PostgresQuery(unsafeSQL: $0), logger: Database.silent) }
            let written = statements[..<split].map { statement in
                connection.query(
                    PostgresQuery(unsafeSQL: statement.sql, binds: statement.binds), logger: Database.silent)
            }
            _ = try await begun?.get()
            var answered: [Answered] = []
            for future in written {
                let result = try await future.get()
                answered.append(Answered(rows: result.rows, changed: result.metadata.rows ?? 0))
            }
            for statement in statements[split...] {
                guard let name = names.name(for: statement.sql) else {
                    let result = try await connection.query(
                        PostgresQuery(unsafeSQL: statement.sql, binds: statement.binds), logger: Database.silent
                    ).get()
                    answered.append(Answered(rows: result.rows, changed: result.metadata.rows ?? 0))
                    continue
                }
                do {
                    let text = NamedStatement.Text(name: name, sql: statement.sql)
                    let rows = try await Self.execute(text, statement.binds, on: connection)
                    answered.append(Answered(rows: rows, changed: 0))
                } catch {
                    throw names.failed(statement.sql, error)
                }
            }
            return answered
        }
    }

    /// Runs the last statement of a transaction and its `COMMIT`, both written to the connection at
    /// once, and returns the statement's rows: the server commits as soon as it has answered the
    /// statement (PostgresNIO sends the `COMMIT` from the event loop on that answer), without a wait
    /// for this task in between, so locks the statement took are held for one round trip less.
    /// Records in ``closing`` how the transaction ended:
    /// - Both answered: committed.
    /// - The statement failed: the server refuses the `COMMIT` of the aborted transaction with a
    ///   rollback, and the statement's error is thrown.
    /// - The `COMMIT` failed on a live connection (a deferred check, a serialization failure): rolled
    ///   back, and its error is thrown.
    /// - The connection ended after the statement's answer: in doubt, and the rows are returned, so
    ///   the caller can finish its value and ``Database`` can ask the server about the transaction
    ///   (whose id the caller sets in ``transactionID`` from the rows).
    /// - The connection ended before the statement's answer: PostgresNIO sends a statement only
    ///   after the one before has been answered, so the `COMMIT` never left and nothing was
    ///   committed; the error is thrown.
    func queryCommitting(_ sql: String, _ binds: PostgresBindings) async throws -> [PostgresRow] {
        let answered = LockedValue<[PostgresRow]?>(nil)
        do {
            try await answer { connection, begin, finish in
                // Written from this thread in order, so they reach the server in that order.
                let begun = begin.map { connection.query(PostgresQuery(unsafeSQL: $0), logger: Database.silent) }
                let statement = connection.query(PostgresQuery(unsafeSQL: sql, binds: binds), logger: Database.silent)
                // Kept on the event loop as the answer arrives, before a close of the connection is seen.
                statement.whenSuccess { result in answered.withLock { $0 = result.rows } }
                let commit = connection.query(PostgresQuery(unsafeSQL: "COMMIT"), logger: Database.silent)
                let all = (begun.map { [$0] } ?? []) + [statement, commit]
                EventLoopFuture.whenAllComplete(all, on: connection.eventLoop).whenComplete { outcomes in
                    do {
                        for outcome in try outcomes.get() { _ = try outcome.get() }
                        finish(.success(()))
                    } catch {
                        finish(.failure(error))
                    }
                }
            }
        } catch {
            guard let rows = answered.withLock({ $0 }) else {
                closing.set(.rolledBack)
                throw error
            }
            guard ModelStoreErrors.endsTheConnection(error) else {
                closing.set(.rolledBack)
                throw error
            }
            closing.set(.inDoubt(error))
            return rows
        }
        closing.set(.committed)
        return answered.withLock { $0 } ?? []
    }

    /// Runs a statement, discarding rows.
    func execute(_ sql: String, _ binds: PostgresBindings = PostgresBindings()) async throws {
        try await query(sql, binds)
    }

    /// The first column of the first row as an integer (`count(*)`, a sequence value).
    func integer(_ sql: String, _ binds: PostgresBindings = PostgresBindings()) async throws -> Int64? {
        guard let row = try await query(sql, binds).first else { return nil }
        return try row.decode(Int64?.self)
    }
}

/// A transaction whose connection ended during its COMMIT, with what its body returned.
///
/// Safety: `value` is the `Sendable` value of the transaction's body, type-erased; it is read
/// once, by the task that ran the transaction.
private struct CommitInDoubt: Error, @unchecked Sendable {
    let transaction: Int64?
    let value: Any
    let underlying: any Error
}

/// A transaction whose connection ended during its `COMMIT`, and whose fate the server could not
/// tell (see ``Database/transactionTellingUnknown(_:isolation:_:)``), with what its body returned
/// when it returned.
///
/// Safety: `value` is the `Sendable` value of the transaction's body, type-erased, as in
/// ``CommitInDoubt``; it is read once, by the task that ran the transaction.
struct CommitOutcomeUnknown: Error, @unchecked Sendable {
    let underlying: any Error
    var value: Any? = nil
}

/// A transaction whose first statement found its connection closed, so that nothing of it was
/// sent: ``Database/transaction(_:isolation:_:)`` runs it again on another connection.
struct NeverBegun: Error {
    let underlying: any Error
}

/// The error of a statement whose connection closed before it was answered.
struct ConnectionClosed: Error {}

/// The first of several outcomes of one statement (its answer, or its connection closing),
/// delivered once to the task waiting for it.
///
/// Safety: the continuation and the delivered flag are read and written only under the lock.
private final class FirstOutcome<Value: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var continuation: CheckedContinuation<Value, any Error>?
    private var early: Result<Value, any Error>?
    private var delivered = false

    /// Records the waiting continuation, resuming it at once if an outcome came first.
    func start(_ continuation: CheckedContinuation<Value, any Error>) {
        lock.lock()
        if let early, !delivered {
            delivered = true
            lock.unlock()
            continuation.resume(with: early)
            return
        }
        self.continuation = continuation
        lock.unlock()
    }

    /// Delivers `result` if no outcome was delivered yet; later outcomes are ignored.
    func finish(_ result: Result<Value, any Error>) {
        lock.lock()
        guard !delivered else {
            lock.unlock()
            return
        }
        guard let continuation else {
            if early == nil { early = result }
            lock.unlock()
            return
        }
        delivered = true
        self.continuation = nil
        lock.unlock()
        continuation.resume(with: result)
    }
}

/// Calls back the statements waiting on a connection when it closes, with one callback on each
/// connection's `closeFuture` (a callback per statement would pile up for the connection's life).
///
/// Safety: `watchers`, `watched` and `next` are read and written only under the lock.
private final class CloseWatch: @unchecked Sendable {
    static let shared = CloseWatch()
    private let lock = NSLock()
    private var watchers: [ObjectIdentifier: [UInt64: @Sendable () -> Void]] = [:]
    private var watched: Set<ObjectIdentifier> = []
    private var next: UInt64 = 0

    /// Calls `onClose` when `connection` closes, unless ``forget(_:on:)`` comes first; returns
    /// the token that forgets it.
    func watch(_ connection: PostgresConnection, onClose: @escaping @Sendable () -> Void) -> UInt64 {
        let key = ObjectIdentifier(connection)
        lock.lock()
        next += 1
        let token = next
        watchers[key, default: [:]][token] = onClose
        let isNew = watched.insert(key).inserted
        lock.unlock()
        if isNew {
            // Runs at once (on the loop) if the connection has already closed.
            connection.closeFuture.whenComplete { _ in self.closed(key) }
        }
        return token
    }

    /// Stops watching for one statement that finished.
    func forget(_ token: UInt64, on connection: PostgresConnection) {
        let key = ObjectIdentifier(connection)
        lock.lock()
        watchers[key]?[token] = nil
        lock.unlock()
    }

    private func closed(_ key: ObjectIdentifier) {
        lock.lock()
        let waiting = watchers.removeValue(forKey: key) ?? [:]
        watched.remove(key)
        lock.unlock()
        for onClose in waiting.values { onClose() }
    }
}
