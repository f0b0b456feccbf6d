import Foundation
import Logging
import ModelStore
import ModelStorePostgreSQL
import PostgresNIO

/// A ``SyncChangeSignal`` over PostgreSQL's `LISTEN`/`NOTIFY`: each process keeps one connection of
/// its own that listens on a channel named after the store's namespace, and announces a push with
/// `pg_notify` on it, so every process on the database hears of it within a round trip.
///
/// When the connection drops (the server restarts, the link breaks), the signal reconnects every
/// `retryDelay` and, once it listens again, yields at once: an announcement sent in between is
/// lost by PostgreSQL, and the read that signal starts finds its change. Until then, announcements
/// are skipped and the feeds' polling carries the changes.
public final class PostgreSQLChangeSignal: SyncChangeSignal {
    /// The notification channel: `modelstore_sync_` and the store's namespace, or a digest of the
    /// namespace when it is not a plain identifier of up to 47 characters.
    public let channel: String

    private struct State {
        var subscribers: [UUID: AsyncStream<Void>.Continuation] = [:]
        var connection: PostgresConnection?
    }

    private let state: LockedValue<State>
    private let logger: Logger
    private let listener: Task<Void, Never>

    /// A signal for the store `configuration` describes; it connects at once, and again after
    /// `retryDelay` whenever the connection fails. Failures are logged to `logger` without the
    /// password.
    public init(
        configuration: PostgreSQLStoreConfiguration, retryDelay: Duration = .seconds(1),
        logger: Logger = Logger(label: "ModelStoreSyncServer")
    ) {
        let channel = Self.channel(for: configuration.namespace)
        let state = LockedValue(State())
        self.channel = channel
        self.state = state
        self.logger = logger
        listener = Task {
            await Self.listen(
                configuration: configuration, channel: channel, state: state, retryDelay: retryDelay,
                logger: logger)
        }
    }

    deinit { listener.cancel() }

    /// Stops listening and closes the connection; announcements after this are skipped.
    public func close() {
        listener.cancel()
    }

    /// Whether the signal's connection listens now.
    public var isListening: Bool { state.withLock { $0.connection != nil } }

    /// Sends a notification on ``channel`` when the connection is up; skips it otherwise.
    public func announce() async {
        guard let connection = state.withLock({ $0.connection }) else { return }
        do {
            let rows = try await connection.query("SELECT pg_notify(\(channel), '')", logger: logger)
            for try await _ in rows {}
        } catch {
            logger.debug("sync change notification not sent", metadata: ["error": "\(SyncServer.redacted(error))"])
        }
    }

    /// A stream of the signal's wake-ups, until its consumer stops iterating.
    public func signals() -> AsyncStream<Void> {
        let id = UUID()
        let (stream, continuation) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
        continuation.onTermination = { [state] _ in state.withLock { _ = $0.subscribers.removeValue(forKey: id) } }
        state.withLock { $0.subscribers[id] = continuation }
        return stream
    }

    private static func wake(_ state: LockedValue<State>) {
        for subscriber in state.withLock({ Array($0.subscribers.values) }) { subscriber.yield() }
    }

    private static func listen(
        configuration: PostgreSQLStoreConfiguration, channel: String, state: LockedValue<State>,
        retryDelay: Duration, logger: Logger
    ) async {
        var wasListening = false
        while !Task.isCancelled {
            do {
                let connection = try await configuration.openConnection()
                do {
                    try await connection.listen(on: channel) { notifications in
                        state.withLock { $0.connection = connection }
                        if wasListening {
                            logger.info("sync change notifications listen again", metadata: ["channel": "\(channel)"])
                        }
                        wasListening = true
                        // Announcements sent before this point reached no one here.
                        wake(state)
                        for try await _ in notifications { wake(state) }
                    }
                } catch {
                    if !Task.isCancelled {
                        logger.warning(
                            "sync change notifications stopped; polling carries changes until they resume",
                            metadata: ["channel": "\(channel)", "error": "\(SyncServer.redacted(error))"])
                    }
                }
                state.withLock { $0.connection = nil }
                try? await connection.close()
            } catch {
                logger.warning(
                    "sync change notifications cannot connect; polling carries changes until they can",
                    metadata: ["store": "\(configuration.redactedURL)", "error": "\(SyncServer.redacted(error))"])
            }
            try? await Task.sleep(for: retryDelay)
        }
    }

    /// The channel for a store in `namespace`: readable when the namespace is a plain identifier
    /// that fits PostgreSQL's 63-byte names, otherwise a digest of it (FNV-1a, 64 bits).
    static func channel(for namespace: String) -> String {
        let prefix = "modelstore_sync_"
        let plain = namespace.unicodeScalars.allSatisfy {
            $0.isASCII && ($0 == "_" || $0.properties.isAlphabetic || ("0"..."9").contains($0))
        }
        if plain, prefix.utf8.count + namespace.utf8.count <= 63 { return prefix + namespace }
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in namespace.utf8 {
            hash ^= UInt64(byte)
            hash &*= 0x0000_0100_0000_01b3
        }
        return prefix + String(hash, radix: 16)
    }
}
