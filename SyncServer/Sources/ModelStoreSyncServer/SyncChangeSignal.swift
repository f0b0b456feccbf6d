import Foundation

/// How the processes serving one store tell each other that it changed, so that every process's
/// live channel tells its clients at once instead of at its next poll of the history.
///
/// A signal only hurries the poll: a process reads the history itself to learn what changed and
/// whom it concerns, and still polls every ``SyncServerConfiguration/changePollInterval``, so a
/// missed signal delays a change by one interval at most and loses nothing.
/// ``PostgreSQLChangeSignal`` is the one for PostgreSQL stores.
public protocol SyncChangeSignal: Sendable {
    /// Tells every process on the store, this one included, that the store has a new transaction.
    /// Does not throw: a signal that cannot be sent is left to the poll.
    func announce() async

    /// A stream that yields after every announcement of any process, and also whenever
    /// announcements may have been missed (when the signal starts listening again after a break),
    /// until its consumer stops iterating.
    func signals() -> AsyncStream<Void>
}
