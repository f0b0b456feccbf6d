import CModelStoreCrypto
import Foundation
import ModelStore

/// A 256-bit key for AES-256-GCM: the secret that opens an encrypted store.
///
/// Its bytes never appear in a description, a debug description or an error, and are wiped from
/// memory when the last copy goes away. Make one from bytes the app holds (a key service, the
/// Keychain), or let ``EncryptionKeySource`` read it from the environment or a file or derive it
/// from a passphrase.
public struct EncryptionKey: Sendable, Hashable, CustomStringConvertible, CustomDebugStringConvertible,
    CustomReflectable
{
    /// The key's size in bytes.
    public static let byteCount = 32

    let storage: KeyStorage

    /// A key from exactly 32 bytes.
    ///
    /// Throws ``DataStoreError/Code/invalidConfiguration`` for any other length (the bytes are not
    /// quoted).
    public init(bytes: some Collection<UInt8>) throws {
        guard bytes.count == Self.byteCount else {
            throw DataStoreError(
                .invalidConfiguration, "an encryption key is \(bytes.count) bytes long, not 32 (256 bits)",
                remedy: "Give 32 random bytes, for example from 'openssl rand -hex 32'; a passphrase goes through "
                    + "EncryptionKeySource.passphrase instead")
        }
        storage = KeyStorage(Array(bytes))
    }

    /// A new key of 32 bytes from the system's cryptographic random generator (`RAND_bytes`).
    public static func random() throws -> EncryptionKey {
        try EncryptionKey(bytes: try SecureRandom.bytes(byteCount))
    }

    /// A key written as text: 64 hexadecimal digits, or the Base64 of 32 bytes. Whitespace around it
    /// is ignored. `origin` names where the text came from, for the error (never the text itself).
    public init(text: String, origin: String) throws {
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        if trimmed.count == 64, let bytes = Self.hexBytes(trimmed) {
            try self.init(bytes: bytes)
        } else if let data = Data(base64Encoded: trimmed), data.count == Self.byteCount {
            try self.init(bytes: data)
        } else {
            throw DataStoreError(
                .invalidConfiguration,
                "the encryption key in \(origin) is not 64 hexadecimal digits or the Base64 of 32 bytes",
                remedy: "Write a key made by 'openssl rand -hex 32' there; for a passphrase use "
                    + "'passphrase-env=NAME' instead")
        }
    }

    /// Runs `body` with the key's bytes.
    public func withUnsafeBytes<Result>(_ body: (UnsafeRawBufferPointer) throws -> Result) rethrows -> Result {
        try storage.bytes.withUnsafeBytes(body)
    }

    /// `EncryptionKey(256 bits, redacted)`: never the bytes.
    public var description: String { "EncryptionKey(256 bits, redacted)" }
    /// The same as ``description``.
    public var debugDescription: String { description }
    /// No children, so that `dump` and debuggers never show the bytes.
    public var customMirror: Mirror { Mirror(self, children: [], displayStyle: .struct) }

    /// Keys are equal when their bytes are (compared in constant time).
    public static func == (lhs: EncryptionKey, rhs: EncryptionKey) -> Bool {
        lhs.storage.bytes.withUnsafeBytes { left in
            rhs.storage.bytes.withUnsafeBytes { right in
                CRYPTO_memcmp(left.baseAddress, right.baseAddress, byteCount) == 0
            }
        }
    }

    /// Hashes nothing secret: every key hashes alike, and equality tells them apart.
    public func hash(into hasher: inout Hasher) { hasher.combine(Self.byteCount) }

    static func hexBytes(_ text: some StringProtocol) -> [UInt8]? {
        guard text.count.isMultiple(of: 2) else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(text.count / 2)
        var index = text.startIndex
        while index < text.endIndex {
            let next = text.index(index, offsetBy: 2)
            guard let byte = UInt8(text[index..<next], radix: 16) else { return nil }
            bytes.append(byte)
            index = next
        }
        return bytes
    }
}

/// The bytes of a key, wiped when the last reference goes.
final class KeyStorage: Sendable {
    // Safety: `bytes` is written only by `init` and `deinit`; nothing reads it after `deinit` starts.
    nonisolated(unsafe) var bytes: [UInt8]

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    deinit {
        bytes.withUnsafeMutableBytes { OPENSSL_cleanse($0.baseAddress, $0.count) }
    }
}

/// The system's cryptographic random generator.
public enum SecureRandom {
    /// `count` bytes from OpenSSL's `RAND_bytes`.
    ///
    /// Throws ``DataStoreError/Code/io`` if the generator cannot be seeded (which the system
    /// reports, and which must never fall back to a weaker source).
    public static func bytes(_ count: Int) throws -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: count)
        try fill(&bytes)
        return bytes
    }

    /// Fills `buffer` with random bytes; see ``bytes(_:)``.
    public static func fill(_ buffer: inout [UInt8]) throws {
        let ok = buffer.withUnsafeMutableBytes { raw in
            raw.isEmpty ? 1 : RAND_bytes(raw.baseAddress!.assumingMemoryBound(to: UInt8.self), Int32(raw.count))
        }
        guard ok == 1 else {
            throw DataStoreError(
                .io, "the system's random generator (OpenSSL RAND_bytes) failed",
                remedy: "Check that the system has an entropy source (/dev/urandom) and try again")
        }
    }
}
