import Foundation
import ModelStore
import ModelStoreFileIO

extension JSONFileStore {
    /// Accepts the JSON store at `url` as it is now: writes the checksum of its current bytes into
    /// its header, so that a file edited by hand on purpose opens again. Returns whether it changed
    /// the file (`false` when the checksum already matched).
    ///
    /// The file must be valid JSON with a ModelStore header (otherwise it throws
    /// ``DataStoreError/Code/corrupted`` naming the line and column); its records are checked
    /// against the schema when the store next opens. A file without a checksum gets one, as the
    /// first key of its top-level object. The file is replaced atomically, under the store's lock.
    ///
    /// Throws ``DataStoreError/Code/notFound`` if there is no file, and
    /// ``DataStoreError/Code/locked`` if a writer holds it past `lockTimeout`.
    @discardableResult
    public static func seal(
        at url: URL, lockTimeout: Duration = .seconds(10), limits: JSONFileStoreConfiguration.Limits = .init()
    ) throws -> Bool {
        let paths = Paths(url)
        guard FileIO.exists(paths.document) else {
            throw DataStoreError(.notFound, "there is no JSON store at '\(paths.document)'", remedy: "Check the path")
        }
        // The sealed file keeps the bits the store's file has.
        let permissions = FilePermissions.matching(fileAt: paths.document)
        let lock = try FileLock(path: paths.lock, permissions: permissions)
        return try lock.withLock(timeout: lockTimeout, document: paths.document) {
            if let prefix = try FileIO.read(paths.document, limit: limits.maximumFileSize)?.bytes,
                DocumentEncryption.isEncrypted(prefix)
            {
                throw DataStoreError(
                    .unsupportedFeature,
                    "the JSON store '\(paths.document)' is encrypted: it cannot be edited by hand, so there is nothing "
                        + "to seal",
                    remedy: "Decrypt it first ('modelstore decrypt'), edit it, seal it, and encrypt it again")
            }
            let (original, header) = try readHeader(paths, limits: limits)
            var bytes = original
            let contents: Range<Int>
            if let checksum = header.checksum {
                bytes.replaceSubrange(checksum.contents, with: DocumentChecksum.placeholder)
                let start = checksum.contents.lowerBound
                contents = start..<(start + DocumentChecksum.placeholder.count)
            } else {
                // The decoder checked that the document is an object.
                contents = DocumentChecksum.insertPlaceholder(into: &bytes)
            }
            bytes.withUnsafeMutableBufferPointer {
                DocumentChecksum.fill($0.baseAddress!, count: $0.count, contents: contents)
            }
            guard bytes != original else { return false }
            do {
                try FileIO.writeAtomically(bytes, to: paths.document, permissions: permissions)
            } catch let error as DataStoreError {
                throw error.inContext("sealing the JSON store '\(paths.document)'")
            }
            return true
        }
    }
}
