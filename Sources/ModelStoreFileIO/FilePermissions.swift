import Foundation
import ModelStore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// The permission bits a store gives the files and folders it creates: private to the user that
/// runs the app unless the configuration says otherwise.
///
/// A store's files hold the app's data, and often its users' personal data, so the built-in stores
/// create every file `0600` (read and write for the owner only) and every folder `0700` by default:
/// documents, backups, logs and their segments, lock files, SQLite's `-wal`, `-shm` and journal
/// files, migration copies and the destinations of `modelstore convert` and `compact`. Choose looser
/// bits when another user (a web server, a backup agent) must read the store:
///
/// ```swift
/// var configuration = JSONFileStoreConfiguration(url: url)
/// configuration.filePermissions = .readableByOthers   // 0644 and 0755, as before
/// // or, in a store URL: json:trips.json?mode=0640
/// ```
///
/// The bits are applied as given, whatever the process's `umask`. Files that already exist keep
/// their bits; `modelstore verify` warns about a store whose files are looser than private.
public struct FilePermissions: Hashable, Sendable, CustomStringConvertible {
    /// The bits of a file, such as `0o600`.
    public var fileMode: UInt16
    /// The bits of a folder, such as `0o700`.
    public var folderMode: UInt16

    /// Explicit bits for files and for folders.
    public init(fileMode: UInt16, folderMode: UInt16) {
        self.fileMode = fileMode & 0o777
        self.folderMode = folderMode & 0o777
    }

    /// A file mode, with the folder mode derived from it: a folder is searchable (`x`) by whoever
    /// may read its files.
    public init(fileMode: UInt16) {
        let mode = fileMode & 0o777
        let search = (mode & 0o444) >> 2
        self.init(fileMode: mode, folderMode: mode | search)
    }

    /// Owner only: files `0600`, folders `0700` (the default).
    public static let `private` = FilePermissions(fileMode: 0o600, folderMode: 0o700)
    /// Readable by everyone, writable by the owner: files `0644`, folders `0755`.
    public static let readableByOthers = FilePermissions(fileMode: 0o644, folderMode: 0o755)
    /// Readable by the owner's group as well: files `0640`, folders `0750`.
    public static let readableByGroup = FilePermissions(fileMode: 0o640, folderMode: 0o750)

    /// Parses an octal file mode as a store URL's `mode` option spells it (`0600`, `644`, `0o640`).
    ///
    /// Throws ``DataStoreError/Code/invalidConfiguration`` for anything else, or for a mode that
    /// would not let the owner read and write the files.
    public init(parsing text: String) throws {
        var digits = Substring(text)
        if digits.hasPrefix("0o") { digits = digits.dropFirst(2) }
        guard !digits.isEmpty, digits.count <= 4, digits.allSatisfy({ ("0"..."7").contains($0) }),
            let value = UInt16(digits, radix: 8), value <= 0o777
        else {
            throw DataStoreError(
                .invalidConfiguration, "the file mode '\(text)' is not an octal mode such as '0600'",
                remedy: "Write the mode in octal, for example 'mode=0600' (owner only) or 'mode=0644'")
        }
        guard value & 0o600 == 0o600 else {
            throw DataStoreError(
                .invalidConfiguration,
                "the file mode '\(text)' does not let the owner read and write the store's files",
                remedy: "Include read and write for the owner (0600), for example 'mode=0640'")
        }
        self.init(fileMode: value)
    }

    /// The bits of the existing file at `path` (folders searchable by whoever may read it), or
    /// ``private`` if there is none: what a tool that rewrites a store's file keeps.
    public static func matching(fileAt path: String) -> FilePermissions {
        FileIO.mode(of: path).map { FilePermissions(fileMode: $0) } ?? .private
    }

    /// Whether a file with these bits is readable or writable by anyone but its owner.
    public static func isLooserThanPrivate(_ mode: UInt16) -> Bool { mode & 0o077 != 0 }

    /// The file mode in octal, as `chmod` takes it (`0600`).
    public var description: String { Self.octal(fileMode) }

    /// `mode` in four octal digits, as `chmod` takes it.
    public static func octal(_ mode: UInt16) -> String {
        let digits = String(mode & 0o7777, radix: 8)
        return String(repeating: "0", count: max(0, 4 - digits.count)) + digits
    }
}

extension FileIO {
    /// The permission bits of the file or folder at `path`, or `nil` if there is none.
    public static func mode(of path: String) -> UInt16? {
        var status = stat()
        guard stat(path, &status) == 0 else { return nil }
        return UInt16(status.st_mode & 0o7777)
    }

    /// Sets the permission bits of the file or folder at `path`.
    public static func setMode(_ mode: UInt16, of path: String) throws {
        guard chmod(path, mode_t(mode)) == 0 else {
            throw failure("change the permissions to \(FilePermissions.octal(mode)) of", path)
        }
    }
}
