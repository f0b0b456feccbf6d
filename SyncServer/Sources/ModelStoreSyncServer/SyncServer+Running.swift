import Foundation
import Hummingbird
import Logging
import ModelStoreSync

extension SyncServer {
    /// Serves the sync routes under `/path` on `host`:`port` (0 picks a free port) until the process
    /// is told to stop (SIGTERM or SIGINT); `onRunning` gets the port once the server listens.
    public func run(
        host: String, port: Int, path: String, logger: Logger? = nil,
        onRunning: @escaping @Sendable (Int) async -> Void = { _ in }
    ) async throws {
        let router = Router()
        addRoutes(to: router.group(RouterPath(path)))
        let app = Application(
            router: router,
            configuration: ApplicationConfiguration(address: .hostname(host, port: port), serverName: nil),
            onServerRunning: { channel in await onRunning(channel.localAddress?.port ?? port) },
            logger: logger)
        try await app.runService()
    }
}
