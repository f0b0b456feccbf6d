import Foundation

/// A folder of its own for one test, removed when the value goes away.
///
/// Every test that touches the file system makes one, so no test depends on another's files or on
/// the order tests run in.
public final class TemporaryDirectory {
    /// The folder.
    public let url: URL

    /// Creates a new, empty folder.
    ///
    /// - Parameters:
    ///   - label: A word that names the test in the folder's name, to find a kept folder by hand.
    ///   - memoryBacked: Puts the folder on `/dev/shm` where there is one, for tests that open a
    ///     store thousands of times and simulate crashes by cutting files rather than by syncing.
    public init(_ label: String = #function, memoryBacked: Bool = false) throws {
        let safe = label.filter { $0.isLetter || $0.isNumber }.prefix(40)
        let shm = URL(fileURLWithPath: "/dev/shm", isDirectory: true)
        let base =
            memoryBacked && FileManager.default.isWritableFile(atPath: shm.path)
            ? shm : FileManager.default.temporaryDirectory
        url = base.appendingPathComponent("ModelStoreTests-\(safe)-\(UUID().uuidString.prefix(8))", isDirectory: true)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(at: url) }

    /// A file or folder inside the folder (not created).
    public func file(_ name: String) -> URL { url.appendingPathComponent(name) }

    /// The path of a file or folder inside the folder (not created).
    public func path(_ name: String) -> String { file(name).path }
}
