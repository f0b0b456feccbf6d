import Foundation
import ModelStore
import PostgresNIO

extension PostgreSQLStore: DataStoreTwoPhaseSaving {
    /// Stages a save that spans several stores, with PostgreSQL's own two-phase commit.
    ///
    /// On a connection of its own, the store writes the save in a transaction and checks the
    /// deferred foreign keys at once, so everything that can fail because of the request fails here
    /// (conflicts, unique indexes) and is rolled back. ``PreparedStoreSave/commit()`` then runs
    /// `PREPARE TRANSACTION`: the server has written the part durably and promises to commit it, but
    /// nobody sees it yet, and ``PreparedStoreSave/abort()`` can still roll it back exactly
    /// (`ROLLBACK PREPARED`), as a save across stores requires once another store's commit fails.
    /// ``PreparedStoreSave/finish()`` runs `COMMIT PREPARED`: the commit point, after every store of
    /// the save committed. Until then the rows it wrote and the history counter stay locked, so
    /// other saves wait, while fetches see the store as it was.
    ///
    /// Throws ``DataStoreError/Code/unsupportedFeature`` when the server's
    /// `max_prepared_transactions` is 0 (PostgreSQL's default), naming the setting to raise.
    public func prepareSave(
        _ request: DataStoreSaveChangesRequest<DefaultSnapshot>
    ) throws -> any PreparedStoreSave<DefaultSnapshot> {
        let read = versionsRead(
            of: request.updated.map(\.persistentIdentifier) + request.deleted.map(\.persistentIdentifier),
            in: request.editingState.id)
        do {
            let staged = try database.wait { try await self.stage(request, versions: read) }
            return PostgreSQLPreparedSave(store: self, request: request, staged: staged)
        } catch let error as DataStoreError where error.code == .conflict {
            markStale(request)
            throw error
        }
    }

    /// Writes the save in an open transaction on a new connection, which it returns.
    private func stage(
        _ request: DataStoreSaveChangesRequest<DefaultSnapshot>, versions read: [PersistentIdentifier: Int64]
    ) async throws -> PostgreSQLPreparedSave.Staged {
        let connection = try await Database.connect(configuration)
        let session = Session(connection: connection)
        do {
            let slots = try await session.integer("SELECT current_setting('max_prepared_transactions')::bigint") ?? 0
            guard slots > 0 else {
                throw DataStoreError(
                    .unsupportedFeature,
                    "the PostgreSQL server of '\(configuration.redactedURL)' cannot take part in a save across "
                        + "stores: its max_prepared_transactions is 0",
                    remedy: "Set max_prepared_transactions (postgresql.conf) to at least the number of connections, "
                        + "or save each store's changes on their own")
            }
            try await session.execute("BEGIN ISOLATION LEVEL READ COMMITTED")
            let (result, written) = try await apply(request, versions: read, with: writer(on: session))
            // The deferred foreign keys are checked now, not at the commit, which must not fail.
            try await session.execute("SET CONSTRAINTS ALL IMMEDIATE")
            return .init(
                connection: connection, result: result, written: written, afterCommit: session.afterCommit.take())
        } catch {
            if !connection.isClosed { _ = try? await session.execute("ROLLBACK") }
            try? await connection.close()
            throw ModelStoreErrors.translate(error, doing: "preparing a save across stores", url: database.url)
        }
    }
}

/// A save staged in an open PostgreSQL transaction on a connection of its own, holding its row
/// locks until it finishes or aborts; see ``PostgreSQLStore/prepareSave(_:)``.
///
/// Safety: the context calls one part's methods from one thread, one at a time (rule 2 of
/// `DataStoreTwoPhaseSaving`); `state` is read and written only under the lock all the same.
final class PostgreSQLPreparedSave: PreparedStoreSave, @unchecked Sendable {
    typealias Snapshot = DefaultSnapshot

    /// What staging leaves: the connection with the open transaction, and what the save wrote.
    struct Staged: @unchecked Sendable {
        // Safety: the connection is used by one call at a time, as the part is.
        let connection: PostgresConnection
        let result: DataStoreSaveChangesResult<DefaultSnapshot>
        let written: [PersistentIdentifier: Int64]
        /// What to run once the part has committed (see ``Session/AfterCommit``).
        let afterCommit: [String]
    }

    private enum State { case prepared, committed, ended }

    let result: DataStoreSaveChangesResult<DefaultSnapshot>
    private let store: PostgreSQLStore
    private let request: DataStoreSaveChangesRequest<DefaultSnapshot>
    private let staged: Staged
    /// The prepared transaction's name, unique to this save, naming the store's namespace so an
    /// operator can tell whose it is (`pg_prepared_xacts`).
    private let transactionName: String
    private let state = LockedValue(State.prepared)

    init(store: PostgreSQLStore, request: DataStoreSaveChangesRequest<DefaultSnapshot>, staged: Staged) {
        self.store = store
        self.request = request
        self.staged = staged
        result = staged.result
        transactionName = Self.transactionName(namespace: store.configuration.namespace)
    }

    /// `modelstore:NAMESPACE:UUID`, as an SQL string literal's contents (quotes doubled).
    static func transactionName(namespace: String) -> String {
        ("modelstore:" + namespace + ":" + UUID().uuidString.lowercased()).replacingOccurrences(of: "'", with: "''")
    }

    /// `PREPARE TRANSACTION`: the part is durable on the server and can still be rolled back.
    func commit() throws {
        guard state.withLock({ $0 }) == .prepared else { return }
        let (session, name) = (Session(connection: staged.connection), transactionName)
        do {
            try store.database.wait { try await session.execute("PREPARE TRANSACTION '\(name)'") }
        } catch {
            // A failed PREPARE TRANSACTION rolls the transaction back.
            abort()
            throw ModelStoreErrors.translate(error, doing: "committing a save across stores", url: store.database.url)
        }
        state.withLock { $0 = .committed }
    }

    /// Rolls the part back: the open transaction, or the prepared one.
    func abort() {
        let before = state.withLock { state in
            defer { state = .ended }
            return state
        }
        let (session, name) = (Session(connection: staged.connection), transactionName)
        switch before {
        case .prepared:
            _ = try? store.database.wait {
                if !session.connection.isClosed { try await session.execute("ROLLBACK") }
            }
        case .committed:
            end(with: "ROLLBACK PREPARED '\(name)'")
        case .ended:
            return
        }
        closeConnection()
    }

    /// `COMMIT PREPARED`: the part becomes visible. The server promised it when it prepared, so
    /// this fails only if the server cannot be reached; then the part stays prepared, and the
    /// message on standard error says how to commit it.
    func finish() {
        let before = state.withLock { state in
            defer { if state == .committed { state = .ended } }
            return state
        }
        switch before {
        case .committed:
            end(with: "COMMIT PREPARED '\(transactionName)'")
            store.remember(staged.written, of: request)
            let (connection, statements) = (staged.connection, staged.afterCommit)
            if !statements.isEmpty {
                _ = try? store.database.wait {
                    let session = Session(connection: connection)
                    for sql in statements where !connection.isClosed { _ = try? await session.execute(sql) }
                }
            }
            closeConnection()
        case .prepared:
            // Finished without a commit: nothing is applied.
            abort()
        case .ended:
            return
        }
    }

    /// Runs `COMMIT PREPARED` or `ROLLBACK PREPARED` on the part's connection, else on a new one
    /// (any session of the role may end a prepared transaction).
    private func end(with statement: String) {
        let (connection, configuration) = (staged.connection, store.configuration)
        do {
            try store.database.wait {
                if !connection.isClosed {
                    do { return try await Session(connection: connection).execute(statement) } catch {}
                }
                let other = try await Database.connect(configuration)
                defer { Task { try? await other.close() } }
                try await Session(connection: other).execute(statement)
            }
        } catch {
            FileHandle.standardError.write(
                Data(
                    ("ModelStore: '\(statement)' failed on the PostgreSQL store '\(store.database.url)': \(error); "
                        + "run it when the server is reachable, as the store's role\n").utf8))
        }
    }

    private func closeConnection() {
        let connection = staged.connection
        _ = try? store.database.wait { try await connection.close() }
    }

    deinit {
        // A part the context dropped without ending it must not keep rows locked.
        if state.withLock({ $0 }) != .ended { abort() }
    }
}
