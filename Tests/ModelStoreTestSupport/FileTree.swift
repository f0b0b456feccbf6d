import Foundation

/// The regular files under a folder, with their bytes: what a test compares to prove that an
/// operation changed nothing on disk.
public enum FileTree {
    /// Every regular file under `directory` (recursively), by path relative to it.
    public static func snapshot(_ directory: URL) throws -> [String: Data] {
        var files: [String: Data] = [:]
        let enumerator = FileManager.default.enumerator(atPath: directory.path)
        while let name = enumerator?.nextObject() as? String {
            let url = directory.appendingPathComponent(name)
            var isDirectory: ObjCBool = false
            if FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory), !isDirectory.boolValue {
                files[name] = try Data(contentsOf: url)
            }
        }
        return files
    }
}
