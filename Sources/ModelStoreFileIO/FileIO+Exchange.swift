import Foundation
import ModelStore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

extension FileIO {
    /// Swaps the names of two files or folders in one atomic step (`renameat2` with
    /// `RENAME_EXCHANGE` on Linux, `renamex_np` with `RENAME_SWAP` on Apple platforms): whoever
    /// looks at either path sees the old entry or the new one, never neither. Flush the folder
    /// afterwards to make the swap durable.
    ///
    /// Throws ``DataStoreError/Code/unsupportedFeature`` where the system or the file system cannot
    /// swap (then nothing changed).
    public static func exchange(_ first: String, _ second: String) throws {
        #if os(Linux)
            typealias RenameAt2 =
                @convention(c) (
                    Int32, UnsafePointer<CChar>, Int32, UnsafePointer<CChar>, UInt32
                ) -> Int32
            guard let symbol = dlsym(nil, "renameat2") else {
                throw DataStoreError(
                    .unsupportedFeature, "this system's C library has no renameat2, so '\(first)' cannot be swapped",
                    remedy: "Use glibc 2.28 or newer")
            }
            let renameat2 = unsafeBitCast(symbol, to: RenameAt2.self)
            let exchange: UInt32 = 1 << 1  // RENAME_EXCHANGE
            guard renameat2(AT_FDCWD, first, AT_FDCWD, second, exchange) == 0 else {
                let code = errno
                if code == EINVAL || code == ENOSYS || code == ENOTSUP {
                    throw DataStoreError(
                        .unsupportedFeature,
                        "the file system of '\(first)' cannot swap two names atomically (renameat2 RENAME_EXCHANGE)",
                        remedy: "Move the store to a local file system such as ext4, xfs or btrfs",
                        underlyingError: FileIOFailure(operation: "swap with '\(second)'", path: first, code: code))
                }
                throw failure("swap with '\(second)'", first, code: code)
            }
        #elseif canImport(Darwin)
            guard renamex_np(first, second, UInt32(RENAME_SWAP)) == 0 else {
                throw failure("swap with '\(second)'", first)
            }
        #else
            throw DataStoreError(
                .unsupportedFeature, "this platform cannot swap '\(first)' and '\(second)' atomically")
        #endif
    }
}
