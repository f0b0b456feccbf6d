import Foundation
import NIOCore
import PostgresNIO

/// One connection the store keeps outside its pool, which every call of the store takes when no
/// other call has it (fetches, saves, see `Database.withConnection`): taking it costs a lock, where
/// leasing a pooled connection costs the pool's bookkeeping and a hop through the pool's own task.
///
/// - One caller at a time: ``take()`` hands the connection to one caller and returns `nil` to the
///   others until it is handed back, so two callers never interleave on it; the others lease from
///   the pool, as every caller did before.
/// - The store's first connection (see ``adopt(_:)``); opened again when next wanted after it
///   ended, by a task of its own, while the caller that wanted it leases from the pool; after a
///   failed open, not tried again for a second.
/// - A connection that closed (the server ended it, or the network did) is dropped when it is next
///   taken or handed back, and a new one opened; one that a statement's error says the server ends
///   (SQLSTATE class 57P or 08) is closed at once, as the pool's are (see `Database.begin`).
/// - ``close()`` closes it, or, if a caller holds it, closes it when handed back; a connection
///   whose open finishes after ``close()`` is closed at once.
///
/// Safety: `state` is read and written only under `lock`.
final class AutocommitConnection: @unchecked Sendable {
    private enum State {
        /// None open; the next ``take()`` opens one if `retryAfter` has passed.
        case none(retryAfter: ContinuousClock.Instant?)
        /// A task is opening one.
        case opening
        /// Open and not in use.
        case idle(PostgresConnection)
        /// Handed to a caller.
        case taken
        /// The store closed: nothing is opened any more.
        case closed
    }

    private let lock = NSLock()
    private var state = State.none(retryAfter: nil)
    private var opensStarted = 0
    private let open: @Sendable () async throws -> PostgresConnection

    /// How long after a failed open the next is tried.
    static let retryDelay = Duration.seconds(1)

    /// A connection opened by `open` when first wanted.
    init(open: @escaping @Sendable () async throws -> PostgresConnection) { self.open = open }

    /// The connection, now the caller's until ``handBack(_:after:)``; `nil` when another caller
    /// has it, or none is open yet (an open then starts), or the store closed.
    func take() -> PostgresConnection? {
        lock.lock()
        switch state {
        case .idle(let connection) where !connection.isClosed:
            state = .taken
            lock.unlock()
            return connection
        case .idle:
            // Closed while idle (the server ended it): dropped, and another opened.
            state = .opening
        case .none(let retryAfter) where retryAfter.map({ ContinuousClock.now >= $0 }) ?? true:
            state = .opening
        case .none, .opening, .taken, .closed:
            lock.unlock()
            return nil
        }
        opensStarted += 1
        lock.unlock()
        startOpening()
        return nil
    }

    /// Takes back the connection ``take()`` returned, after the caller's statements ended with
    /// `error` (`nil` when they succeeded): kept for the next caller while it lives, else dropped
    /// (closed at once if the error says the server ends it).
    func handBack(_ connection: PostgresConnection, after error: (any Error)?) {
        let ends = connection.isClosed || error.map(Self.endsTheConnection) == true
        lock.lock()
        let keep: Bool
        switch state {
        case .closed:
            keep = false
        default:
            keep = !ends
            state = keep ? .idle(connection) : .none(retryAfter: nil)
        }
        lock.unlock()
        if !keep { Self.close(connection) }
    }

    /// Keeps `connection`, opened by the store, when none is kept or being opened; returns whether
    /// it did (the caller closes it otherwise).
    func adopt(_ connection: PostgresConnection) -> Bool {
        lock.withLock {
            guard case .none = state else { return false }
            state = .idle(connection)
            return true
        }
    }

    /// How many opens ``take()`` has started (for tests).
    var opensStartedSoFar: Int { lock.withLock { opensStarted } }

    /// Whether a connection is open, idle or taken (for tests).
    var holdsConnection: Bool {
        lock.withLock {
            switch state {
            case .idle, .taken: true
            case .none, .opening, .closed: false
            }
        }
    }

    /// Closes the connection (now, or when its caller hands it back); nothing is opened afterwards.
    func close() {
        lock.lock()
        let idle: PostgresConnection?
        if case .idle(let connection) = state { idle = connection } else { idle = nil }
        state = .closed
        lock.unlock()
        if let idle { Self.close(idle) }
    }

    /// Opens a connection in a task of its own, and keeps it (or closes it, if the store closed
    /// meanwhile).
    private func startOpening() {
        // On the global executor, never on the caller's: a synchronous call's waiting thread stops
        // serving tasks once its own work ends.
        Task(executorPreference: globalConcurrentExecutor) { [self] in
            let opened: PostgresConnection
            do {
                opened = try await open()
            } catch {
                lock.withLock {
                    if case .opening = state { state = .none(retryAfter: ContinuousClock.now + Self.retryDelay) }
                }
                return
            }
            let kept: Bool = lock.withLock {
                guard case .opening = state else { return false }
                state = .idle(opened)
                return true
            }
            if !kept { Self.close(opened) }
        }
    }

    /// Whether an error of a statement means the connection is gone or going: the server said it
    /// ends the session (SQLSTATE class 57P or 08), or the connection failed without the server's
    /// word (an error of PostgresNIO without a SQLSTATE, or ``ConnectionClosed``). A statement the
    /// server refused on a connection that lives on, and the store's own errors, keep it.
    static func endsTheConnection(_ error: any Error) -> Bool {
        if error is ConnectionClosed { return true }
        guard let error = error as? PSQLError else { return false }
        guard let state = error.serverInfo?[.sqlState] else { return true }
        return state.hasPrefix("57P") || state.hasPrefix("08")
    }

    /// Closes `connection`, keeping it alive until it has (PostgresNIO asserts that a connection is
    /// closed when it is freed).
    private static func close(_ connection: PostgresConnection) {
        connection.close().whenComplete { _ in withExtendedLifetime(connection) {} }
    }
}
