import Foundation
import ModelStore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// A failed system call: what was attempted, on which path, and the `errno` it set.
///
/// Every ``FileIO`` and ``OpenFile`` operation that fails throws a ``DataStoreError`` with the
/// code ``DataStoreError/Code/io`` whose `underlyingError` is one of these, so an adapter can
/// tell a full disk (`ENOSPC`) from a missing permission (`EACCES`) without parsing messages:
///
/// ```swift
/// catch let error as DataStoreError where error.code == .io {
///     if (error.underlyingError as? FileIOFailure)?.code == ENOSPC { … }
/// }
/// ```
public struct FileIOFailure: Error, Sendable, Hashable, CustomStringConvertible {
    /// What was attempted, as a verb phrase: `"open"`, `"flush to disk"`, `"rename to 'b'"`.
    public let operation: String
    /// The path it was attempted on.
    public let path: String
    /// The `errno` the system call set.
    public let code: Int32

    /// A failure of `operation` on `path` with `errno` `code`.
    public init(operation: String, path: String, code: Int32) {
        self.operation = operation
        self.path = path
        self.code = code
    }

    /// The system's description of ``code``, such as `"No space left on device"`.
    public var reason: String { String(cString: strerror(code)) }

    /// `could not OPERATION 'PATH' (REASON, errno N)`.
    public var description: String { "could not \(operation) '\(path)' (\(reason), errno \(code))" }

    /// The remedy that fits the `errno`: free disk space, fix permissions, or check the disk.
    public var remedy: String {
        switch code {
        case EACCES, EPERM, EROFS: "Check that the folder and the file are writable by this process"
        case ENOSPC, EDQUOT: "Free some disk space and try again"
        case EMFILE, ENFILE: "Close some files (or raise the limit of open files, 'ulimit -n') and try again"
        default: "Check that the disk is available and try again"
        }
    }

    /// The failure as a ``DataStoreError/Code/io`` error; `context` says what the store was doing,
    /// such as `"saving the JSON store 'trips.json'"`.
    public func storeError(_ context: String? = nil, remedy: String? = nil) -> DataStoreError {
        DataStoreError(
            .io, context.map { "\($0): \(description)" } ?? description, remedy: remedy ?? self.remedy,
            underlyingError: self)
    }
}

extension DataStoreError {
    /// The `errno` of the failed system call behind an ``DataStoreError/Code/io`` error, if one is.
    public var fileIOCode: Int32? { (underlyingError as? FileIOFailure)?.code }

    /// The error with `context` (what the store was doing) in front of its message.
    public func inContext(_ context: String) -> DataStoreError {
        var error = self
        error.message = "\(context): \(message)"
        return error
    }
}
