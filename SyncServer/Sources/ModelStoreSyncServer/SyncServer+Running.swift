import Foundation
import Hummingbird
import HummingbirdCore
import HummingbirdTLS
import Logging
import ModelStoreSync
import NIOSSL

extension SyncServer {
    /// Serves the sync routes under `/path` on `host`:`port` (0 picks a free port) until the process
    /// is told to stop (SIGTERM or SIGINT); `onRunning` gets the port once the server listens.
    /// With `tls` the routes are served over HTTPS only (``SyncServerTLS/reading(certificateFile:keyFile:)``
    /// loads a certificate and key); without, over plain HTTP, for a TLS proxy in front or loopback.
    public func run(
        host: String, port: Int, path: String, tls: SyncServerTLS? = nil, logger: Logger? = nil,
        onRunning: @escaping @Sendable (Int) async -> Void = { _ in }
    ) async throws {
        let router = Router()
        addRoutes(to: router.group(RouterPath(path)))
        let server: HTTPServerBuilder =
            if let tls { try .tls(.http1(), tlsConfiguration: tls.configuration) } else { .http1() }
        let app = Application(
            router: router, server: server,
            configuration: ApplicationConfiguration(address: .hostname(host, port: port), serverName: nil),
            onServerRunning: { channel in await onRunning(channel.localAddress?.port ?? port) },
            logger: logger)
        try await app.runService()
    }
}
