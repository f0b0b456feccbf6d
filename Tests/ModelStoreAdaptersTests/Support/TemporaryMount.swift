import Foundation

/// A small tmpfs mounted for one test, unmounted and removed when the value goes away: a disk that
/// fills up, or one made read-only under a store. Mounting needs root (and `CAP_SYS_ADMIN`);
/// ``refusal`` says why it cannot be done here, so the tests that need it skip with that reason.
final class TemporaryMount {
    let url: URL

    /// Why this process cannot mount a tmpfs, or `nil` when it can (tried once, on a probe mount).
    static let refusal: String? = {
        do {
            _ = try TemporaryMount(kibibytes: 64)
            return nil
        } catch {
            return "mounting a tmpfs is refused here (\(error)); run as root with CAP_SYS_ADMIN"
        }
    }()

    /// Mounts a tmpfs of `kibibytes` on a fresh temporary folder.
    init(kibibytes: Int) throws {
        url = FileManager.default.temporaryDirectory
            .appendingPathComponent("ResourceTests-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        do {
            try Self.mount(["-t", "tmpfs", "-o", "size=\(kibibytes)k", "tmpfs", url.path])
        } catch {
            try? FileManager.default.removeItem(at: url)
            throw error
        }
    }

    /// Remounts the file system read-only or writable, or with a new size.
    ///
    /// The kernel refuses a read-only remount ("mount point is busy") while any file on it is open
    /// for writing, and a store just closed may still have a file open for a moment (a handle
    /// released on another thread). A busy remount is tried again for up to two seconds; any other
    /// failure, or one still busy then, is thrown.
    func remount(readOnly: Bool, kibibytes: Int? = nil) throws {
        let size = kibibytes.map { ",size=\($0)k" } ?? ""
        let arguments = ["-o", "remount,\(readOnly ? "ro" : "rw")\(size)", url.path]
        for _ in 0..<40 {
            do {
                return try Self.mount(arguments)
            } catch let failure as MountFailure where failure.message.contains("busy") {
                Thread.sleep(forTimeInterval: 0.05)
            }
        }
        try Self.mount(arguments)
    }

    deinit {
        try? Self.run("/bin/umount", ["-l", url.path])
        try? FileManager.default.removeItem(at: url)
    }

    private static func mount(_ arguments: [String]) throws { try run("/bin/mount", arguments) }

    private static func run(_ executable: String, _ arguments: [String]) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        let errors = Pipe()
        process.standardError = errors
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            let message = String(
                decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            throw MountFailure(
                command: ([executable] + arguments).joined(separator: " "), message: message)
        }
    }

    /// A mount command that failed, with what it printed.
    struct MountFailure: Error, CustomStringConvertible {
        var command: String
        var message: String
        var description: String {
            "'\(command)' failed: \(message.trimmingCharacters(in: .whitespacesAndNewlines))"
        }
    }
}
