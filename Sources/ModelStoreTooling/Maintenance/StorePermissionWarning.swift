import Foundation

/// A file or folder of a store that people other than its owner may read or write: what
/// `modelstore verify` warns about, since the built-in stores create their files for the owner only
/// (`0600`, folders `0700`).
///
/// A warning is not damage: the store works, but its data is open to other accounts on the machine.
public struct StorePermissionWarning: Encodable, Hashable, Sendable, CustomStringConvertible {
    /// The file's or folder's path.
    public let path: String
    /// Its permission bits, in octal (`0644`).
    public let mode: String
    /// Whether it is a folder.
    public let isFolder: Bool

    /// A warning.
    public init(path: String, mode: UInt16, isFolder: Bool) {
        self.path = path
        let digits = String(mode & 0o7777, radix: 8)
        self.mode = String(repeating: "0", count: max(0, 4 - digits.count)) + digits
        self.isFolder = isFolder
    }

    /// The command that makes it private.
    public var fix: String { "chmod \(isFolder ? "700" : "600") '\(path)'" }

    /// `'PATH' (folder) has mode 0755, open to other users: run chmod 700 'PATH'`.
    public var description: String {
        "'\(path)'\(isFolder ? " (folder)" : "") has mode \(mode), open to other users: run \(fix)"
    }

    /// The warnings for the store at `location`: the folder of a store kept in a directory, every
    /// file and folder under it, or a file and the files and folders beside it that share its name
    /// (`trips.json.backup`, `trips.sqlite-wal`, `trips.sqlite.external/`…). Empty when nothing is
    /// at `location`. A store whose owner chose looser bits (`?mode=0644`) gets its warnings too:
    /// the check cannot know the choice was deliberate.
    public static func all(at location: URL) -> [StorePermissionWarning] {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: location.path, isDirectory: &isDirectory) else { return [] }
        var paths: [String] = []
        if isDirectory.boolValue {
            paths = [location.path] + everything(under: location.path)
        } else {
            let folder = location.deletingLastPathComponent().path
            let name = location.lastPathComponent
            paths = [location.path]
            let siblings = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
            for sibling in siblings.sorted() where sibling.hasPrefix(name + ".") || sibling.hasPrefix(name + "-") {
                let path = (folder as NSString).appendingPathComponent(sibling)
                paths.append(path)
                paths += everything(under: path)
            }
        }
        return paths.compactMap { path in
            guard let attributes = try? FileManager.default.attributesOfItem(atPath: path),
                let mode = (attributes[.posixPermissions] as? NSNumber)?.uint16Value, mode & 0o077 != 0
            else { return nil }
            let type = attributes[.type] as? FileAttributeType
            guard type == .typeRegular || type == .typeDirectory else { return nil }
            return StorePermissionWarning(path: path, mode: mode, isFolder: type == .typeDirectory)
        }
    }

    private static func everything(under folder: String) -> [String] {
        guard let enumerator = FileManager.default.enumerator(atPath: folder) else { return [] }
        var paths: [String] = []
        while let relative = enumerator.nextObject() as? String {
            paths.append((folder as NSString).appendingPathComponent(relative))
        }
        return paths.sorted()
    }
}
