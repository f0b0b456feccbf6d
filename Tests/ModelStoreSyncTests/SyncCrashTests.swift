import Foundation
import ModelStoreTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The short run of the sync crash test (`scripts/sync-crash-test.sh` is the long one): replica
/// processes that edit and sync against a shared SQLite store are killed with SIGKILL at random
/// instants and restarted; the last clean round then finds nothing acknowledged lost or doubled,
/// every replica equal to the shared store, and one model per global identifier there.
@Suite struct SyncCrashTests {
    /// `ModelStoreSyncCrashTest`, beside the test bundle in the build directory.
    static func executable() throws -> URL {
        try SampleProcess.builtExecutable(named: "ModelStoreSyncCrashTest")
    }

    static func start(_ executable: URL, _ arguments: [String], output: URL? = nil) throws -> Process {
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        if let output {
            _ = FileManager.default.createFile(atPath: output.path, contents: nil)
            process.standardOutput = try FileHandle(forWritingTo: output)
        }
        process.standardError = FileHandle.nullDevice
        try process.run()
        return process
    }

    @Test func killedReplicasLoseAndDoubleNothingAcknowledged() throws {
        let executable = try Self.executable()
        let directory = try TemporaryDirectory()
        let shared = "sqlite:" + directory.path("shared.sqlite")
        let members = [("a", "sqlite:" + directory.path("a.sqlite")), ("b", "json:" + directory.path("b.json"))]
        var random = SplitMix64(seed: UInt64(Date().timeIntervalSince1970))
        var unexpected: [String] = []
        for trial in 0..<8 {
            let processes = try members.map { writer, local in
                try Self.start(executable, ["work", writer, local, shared, directory.path("\(writer).ack")])
            }
            for process in processes {
                usleep(UInt32(50_000 + random.below(500_000)))
                kill(process.processIdentifier, SIGKILL)
            }
            for (process, member) in zip(processes, members) {
                process.waitUntilExit()
                if process.terminationReason != .uncaughtSignal {
                    unexpected.append("trial \(trial): '\(member.0)' exited with \(process.terminationStatus)")
                }
            }
        }
        #expect(unexpected.isEmpty)
        let output = directory.file("check.txt")
        let check = try Self.start(
            executable, ["check", shared] + members.map { "\($0.0)=\($0.1)=\(directory.path("\($0.0).ack"))" },
            output: output)
        check.waitUntilExit()
        let report = try String(contentsOf: output, encoding: .utf8)
        #expect(check.terminationStatus == 0, "\(report)")
        #expect(report.contains("problems 0"), "\(report)")
        let acknowledged = report.split(separator: " ").dropFirst().first.flatMap { Int($0) } ?? 0
        #expect(acknowledged > 0, "nothing was acknowledged: \(report)")
    }
}
