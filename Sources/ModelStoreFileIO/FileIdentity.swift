import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// The identity of a file's current contents, as far as the file system tells it cheaply: which
/// inode, how long, when last changed. Replacing a file (a new inode) or writing it (new times)
/// changes its identity, so two reads with equal identities read the same contents.
public struct FileIdentity: Hashable, Sendable {
    /// The device that holds the file.
    public var device: UInt64
    /// The file's inode number.
    public var inode: UInt64
    /// The file's size in bytes.
    public var size: Int64
    /// The modification time: seconds.
    public var modificationSeconds: Int64
    /// The modification time: nanoseconds.
    public var modificationNanoseconds: Int64
    /// The status-change time: seconds.
    public var changeSeconds: Int64
    /// The status-change time: nanoseconds.
    public var changeNanoseconds: Int64

    /// The identity a `stat` call returned.
    public init(_ status: stat) {
        device = UInt64(status.st_dev)
        inode = UInt64(status.st_ino)
        size = Int64(status.st_size)
        #if canImport(Darwin)
            modificationSeconds = Int64(status.st_mtimespec.tv_sec)
            modificationNanoseconds = Int64(status.st_mtimespec.tv_nsec)
            changeSeconds = Int64(status.st_ctimespec.tv_sec)
            changeNanoseconds = Int64(status.st_ctimespec.tv_nsec)
        #else
            modificationSeconds = Int64(status.st_mtim.tv_sec)
            modificationNanoseconds = Int64(status.st_mtim.tv_nsec)
            changeSeconds = Int64(status.st_ctim.tv_sec)
            changeNanoseconds = Int64(status.st_ctim.tv_nsec)
        #endif
    }
}
