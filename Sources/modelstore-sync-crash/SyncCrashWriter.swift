import Foundation
import ModelStore
import ModelStoreAdapters
import ModelStoreSync

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// One replica's process: applies its operations one after another, acknowledging each (its number
/// on a synced line of the acknowledgement file) once the local save returned, and runs a sync round
/// against the shared store after most of them (after the first ``syncCrashFirstRoundAfter``), until
/// it is killed or has done `limit`.
struct SyncCrashWriter {
    let writer: String
    let localURL: String
    let sharedURL: String
    let acknowledgements: String
    let limit: Int

    func run() async throws {
        let done = try Self.acknowledgedCount(acknowledgements)
        let log = open(acknowledgements, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0o644)
        guard log >= 0 else { throw SyncCrashError("cannot open '\(acknowledgements)': errno \(errno)") }
        defer { close(log) }
        let local = try ModelContainer(for: syncCrashSchema, url: localURL)
        let host = try SyncHost(container: ModelContainer(for: syncCrashSchema, url: sharedURL))
        let engine = try SyncEngine(
            container: local, transport: InProcessSyncTransport(host: host), configuration: syncCrashConfiguration)
        let context = ModelContext(local)
        var number = done
        while number < limit {
            try SyncCrashWorkload.apply(number, writer: writer, context: context)
            let line = Array("\(number)\n".utf8)
            guard write(log, line, line.count) == line.count, fsync(log) == 0 else {
                throw SyncCrashError("cannot acknowledge in '\(acknowledgements)': errno \(errno)")
            }
            number += 1
            if number >= syncCrashFirstRoundAfter && Int.random(in: 0..<4) > 0 {
                do {
                    try await engine.syncNow()
                } catch let error as SyncError where error.isTransient {
                    // Another process holds the shared store: the next round repeats the work.
                    FileHandle.standardError.write(Data("\(writer): round failed, retrying later: \(error)\n".utf8))
                }
            }
        }
    }

    /// The number of whole lines in the acknowledgement file (0 when there is none).
    static func acknowledgedCount(_ path: String) throws -> Int {
        guard let data = FileManager.default.contents(atPath: path) else { return 0 }
        return data.reduce(0) { $0 + ($1 == UInt8(ascii: "\n") ? 1 : 0) }
    }
}
