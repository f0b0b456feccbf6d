import CModelStoreCrypto
import ModelStore

/// OpenSSL cipher contexts that hold one key's schedule, kept for reuse: a seal or an open borrows
/// one (or makes one), sets only the nonce, and gives it back, so a small record costs one AES-GCM
/// pass and not a key setup.
///
/// A context is used by one thread at a time (it is taken out of the pool while in use); the pool
/// keeps at most a few, and frees them with itself.
final class CipherContexts: Sendable {
    /// An OpenSSL context.
    private struct Context: @unchecked Sendable {
        // Safety: a context is only touched by the thread that took it out of the pool, until it
        // puts it back under the pool's lock.
        let pointer: OpaquePointer
    }

    private let key: EncryptionKey
    private let encrypting: Bool
    private let idle = LockedValue<[Context]>([])
    private static let kept = 8

    init(key: EncryptionKey, encrypting: Bool) {
        self.key = key
        self.encrypting = encrypting
    }

    deinit {
        for context in idle.withLock({ $0 }) { EVP_CIPHER_CTX_free(context.pointer) }
    }

    /// Runs `body` with a context, or returns `nil` if OpenSSL cannot make one. A context `body`
    /// throws from is freed rather than kept, whatever state it was left in.
    func with<Result>(_ body: (OpaquePointer) throws -> Result) rethrows -> Result? {
        let borrowed = idle.withLock { $0.popLast() }
        let context: Context
        if let borrowed {
            context = borrowed
        } else {
            let made = key.withUnsafeBytes {
                modelstore_aes256gcm_context($0.baseAddress!.assumingMemoryBound(to: UInt8.self), encrypting ? 1 : 0)
            }
            guard let made else { return nil }
            context = Context(pointer: made)
        }
        let result: Result
        do {
            result = try body(context.pointer)
        } catch {
            EVP_CIPHER_CTX_free(context.pointer)
            throw error
        }
        let freed = idle.withLock { idle -> Bool in
            guard idle.count < Self.kept else { return true }
            idle.append(context)
            return false
        }
        if freed { EVP_CIPHER_CTX_free(context.pointer) }
        return result
    }
}
