import Foundation
import ModelStore
import PostgresNIO

/// The errors of the PostgreSQL store, one factory per failure, each naming the store by its
/// URL without the password.
enum ModelStoreErrors {
    /// A synchronous call on an event-loop thread.
    static func onEventLoop(_ url: String) -> DataStoreError {
        DataStoreError(
            .unsupportedFeature,
            "a synchronous call to the PostgreSQL store '\(url)' was made on a NIO event-loop thread, "
                + "where waiting would stop the loop",
            remedy: "Call the store from a task with `try await context.fetchAsync(…)` / `saveAsync()`, "
                + "or from a thread that is not an event loop")
    }

    /// A connection lost while its transaction was committing: the server may or may not have
    /// stored it.
    static func commitOutcomeUnknown(_ doing: String, url: String, underlying: any Error) -> DataStoreError {
        DataStoreError(
            .io,
            "\(doing) on the PostgreSQL store '\(url)' failed: the connection was lost while committing, "
                + "so whether the changes were stored is unknown",
            remedy: "Fetch the models again in a new context to see whether the changes are there before "
                + "repeating them; a save of rows read before this one fails with a conflict if they were stored",
            underlyingError: underlying)
    }

    /// The SQLSTATE of a server error, if the error is one.
    static func sqlState(_ error: any Error) -> String? {
        (error as? PSQLError)?.serverInfo?[.sqlState]
    }

    /// Whether an error ended the connection (a lost connection, or the server ending the session
    /// with SQLSTATE class 57P or 08) rather than refusing a statement on a connection that lives on.
    static func endsTheConnection(_ error: any Error) -> Bool {
        guard let state = sqlState(error) else { return true }
        return state.hasPrefix("57P") || state.hasPrefix("08")
    }

    /// Whether running the transaction again may succeed: a serialization failure or a deadlock.
    static func isRetryable(_ error: any Error) -> Bool {
        ["40001", "40P01"].contains(sqlState(error) ?? "")
    }

    /// A `DataStoreError` for an error of PostgresNIO or the server while `doing` something.
    ///
    /// The message names the store by its redacted URL and quotes the server's SQLSTATE and
    /// message (which name objects, never the values of a row's columns, for the errors mapped here).
    static func translate(_ error: any Error, doing: String, url: String) -> DataStoreError {
        if let error = error as? DataStoreError { return error }
        if let refused = error as? RunUnprepared { return translate(refused.underlying, doing: doing, url: url) }
        if let refused = error as? RunAgain { return translate(refused.underlying, doing: doing, url: url) }
        if let never = error as? NeverBegun { return translate(never.underlying, doing: doing, url: url) }
        if error is ConnectionClosed {
            return DataStoreError(
                .io,
                "\(doing) on the PostgreSQL store '\(url)' failed: the connection closed before the server answered",
                remedy: "Check that the server is running and reachable; the next call reconnects",
                underlyingError: error)
        }
        guard let psql = error as? PSQLError else {
            return DataStoreError(
                .io, "\(doing) on the PostgreSQL store '\(url)' failed: \(type(of: error))",
                remedy: "Check that the server is running and reachable", underlyingError: error)
        }
        if let state = psql.serverInfo?[.sqlState] {
            let message = psql.serverInfo?[.message] ?? ""
            switch state {
            case "40001", "40P01":
                return DataStoreError(
                    .conflict,
                    "\(doing) on the PostgreSQL store '\(url)' failed: another transaction wrote the same rows "
                        + "(SQLSTATE \(state))",
                    remedy: "Fetch the models again and repeat the change", underlyingError: error)
            case "57014":
                return DataStoreError(
                    .locked,
                    "\(doing) on the PostgreSQL store '\(url)' ran past the statement timeout and was cancelled",
                    remedy: "Raise statement_timeout, or make the operation smaller", underlyingError: error)
            case "55P03":
                return DataStoreError(
                    .locked, "\(doing) on the PostgreSQL store '\(url)' could not take a lock",
                    remedy: "Try again once the other transaction ended", underlyingError: error)
            case "28000" where message.contains("no encryption"):
                return DataStoreError(
                    .invalidConfiguration,
                    "the PostgreSQL server of '\(url)' refused a connection without TLS: it accepts this database "
                        + "and role over TLS only",
                    remedy: "Add sslmode=require to the URL (and sslrootcert=FILE for a private CA)",
                    underlyingError: error)
            case "28P01", "28000":
                return DataStoreError(
                    .invalidConfiguration,
                    "the PostgreSQL server refused the credentials for '\(url)'",
                    remedy: "Check the user and the password (in the URL or PGPASSWORD)", underlyingError: error)
            case "3D000":
                return DataStoreError(
                    .notFound, "the PostgreSQL database of '\(url)' does not exist",
                    remedy: "Create it (createdb) or name another one", underlyingError: error)
            case "57P01", "57P02", "57P03":
                return DataStoreError(
                    .io, "\(doing) on the PostgreSQL store '\(url)' failed: the server ended the connection",
                    remedy: "Try again; the store reconnects", underlyingError: error)
            default:
                return DataStoreError(
                    .io, "\(doing) on the PostgreSQL store '\(url)' failed: SQLSTATE \(state) \(message)",
                    remedy: "Check the server's log", underlyingError: error)
            }
        }
        switch psql.code {
        case .connectionError, .serverClosedConnection, .clientClosedConnection, .uncleanShutdown:
            return DataStoreError(
                .io, "\(doing) on the PostgreSQL store '\(url)' failed: the connection was lost or could not be made",
                remedy: "Check that the server is running and reachable; the next call reconnects",
                underlyingError: error)
        default:
            return DataStoreError(
                .io, "\(doing) on the PostgreSQL store '\(url)' failed: \(psql.code)",
                remedy: "Check the server and the network", underlyingError: error)
        }
    }
}
