import CModelStoreCrypto
import Foundation
import ModelStore

/// Where an encrypted store's key comes from: the app's own bytes, an environment variable, a
/// file, or a passphrase run through scrypt with the salt the store keeps.
///
/// A store URL names the last four with `key-env=NAME`, `key-file=PATH` and `passphrase-env=NAME`
/// (a passphrase itself never goes in a URL). The key is read when the store opens and kept only
/// in memory; it is never written beside the data, and ``description`` names the source, never
/// the secret.
public enum EncryptionKeySource: Sendable, Hashable, CustomStringConvertible, CustomDebugStringConvertible,
    CustomReflectable
{
    /// A key the app holds (from a key service or the Keychain, for example).
    case key(EncryptionKey)
    /// A key written in the environment variable `name`, as 64 hexadecimal digits or Base64.
    case environment(String)
    /// A key in the file at `path`: 32 bytes, or 64 hexadecimal digits or Base64 as text. Keep the
    /// file away from the store's files, readable only by the app.
    case file(String)
    /// A passphrase, from which scrypt derives the key with the store's salt.
    case passphrase(String)
    /// A passphrase in the environment variable `name`.
    case passphraseEnvironment(String)

    /// Whether the key is derived from a passphrase (and so needs the store's salt).
    public var isPassphrase: Bool {
        switch self {
        case .passphrase, .passphraseEnvironment: true
        case .key, .environment, .file: false
        }
    }

    /// The same as ``description``: never the secret.
    public var debugDescription: String { description }
    /// No children, so that `dump` and debuggers never show a key or a passphrase.
    public var customMirror: Mirror { Mirror(self, children: [], displayStyle: .enum) }

    /// Where the key comes from, in words, without the secret: for messages.
    public var description: String {
        switch self {
        case .key: "the key the app gave"
        case .environment(let name): "the key in the environment variable '\(name)'"
        case .file(let path): "the key in the file '\(path)'"
        case .passphrase: "the passphrase the app gave"
        case .passphraseEnvironment(let name): "the passphrase in the environment variable '\(name)'"
        }
    }

    /// The key, derived with `derivation` for a passphrase; a variable is read from `environment`,
    /// or, when it is `nil`, from this process's environment (that one variable, not a copy of them all,
    /// since stores resolve their key on every open).
    ///
    /// Throws ``DataStoreError/Code/invalidConfiguration`` for a missing variable or file or a
    /// malformed key, naming the source (never its contents).
    public func resolve(derivation: KeyDerivation, environment: [String: String]? = nil) throws -> EncryptionKey {
        switch self {
        case .key(let key):
            return key
        case .environment(let name):
            return try EncryptionKey(
                text: try Self.variable(name, environment), origin: "the environment variable '\(name)'")
        case .file(let path):
            guard let data = FileManager.default.contents(atPath: (path as NSString).expandingTildeInPath) else {
                throw DataStoreError(
                    .invalidConfiguration, "the key file '\(path)' cannot be read",
                    remedy: "Check the path and that this user may read the file")
            }
            if data.count == EncryptionKey.byteCount { return try EncryptionKey(bytes: data) }
            return try EncryptionKey(text: String(decoding: data, as: UTF8.self), origin: "the file '\(path)'")
        case .passphrase(let passphrase):
            return try derivation.derive(passphrase: passphrase)
        case .passphraseEnvironment(let name):
            return try derivation.derive(passphrase: try Self.variable(name, environment))
        }
    }

    private static func variable(_ name: String, _ environment: [String: String]?) throws -> String {
        let value = environment.map { $0[name] } ?? getenv(name).map { String(cString: $0) }
        guard let value, !value.isEmpty else {
            throw DataStoreError(
                .invalidConfiguration, "the environment variable '\(name)' that should hold the store's key is not set",
                remedy: "Set '\(name)' in the environment of the process that opens the store")
        }
        return value
    }
}

/// How a store's key is made from what the app gives: used as is, or derived from a passphrase by
/// scrypt (memory-hard) with a random salt the store keeps in its encryption header.
public enum KeyDerivation: Sendable, Hashable {
    /// The app gives the key itself: nothing to derive, nothing to pay at open.
    case none
    /// scrypt with cost `n` (a power of two), block size `r`, parallelism `p` and `salt`.
    case scrypt(n: UInt64, r: UInt64, p: UInt64, salt: [UInt8])

    /// scrypt with n = 2¹⁵, r = 8, p = 1 (32 MiB, about 0.1 s on a server core) and a new 16-byte salt.
    public static func newScrypt() throws -> KeyDerivation {
        .scrypt(n: 1 << 15, r: 8, p: 1, salt: try SecureRandom.bytes(16))
    }

    /// The key scrypt derives from `passphrase`. Throws for ``none`` (a passphrase for a store
    /// made with a key) and when OpenSSL refuses the parameters.
    public func derive(passphrase: String) throws -> EncryptionKey {
        guard case .scrypt(let n, let r, let p, let salt) = self else {
            throw DataStoreError(
                .invalidConfiguration, "the store was encrypted with a key, not a passphrase",
                remedy: "Give the key with 'key-env=NAME' or 'key-file=PATH' (or EncryptionKeySource.key)")
        }
        var key = [UInt8](repeating: 0, count: EncryptionKey.byteCount)
        defer { key.withUnsafeMutableBytes { OPENSSL_cleanse($0.baseAddress, $0.count) } }
        let memory = 128 * n * r * p + 64 * 1024 * 1024
        let ok = Array(passphrase.utf8).withUnsafeBufferPointer { pass in
            pass.withMemoryRebound(to: CChar.self) { pass in
                EVP_PBE_scrypt(
                    pass.baseAddress, pass.count, salt, salt.count, n, r, p, memory, &key, key.count)
            }
        }
        guard ok == 1 else {
            throw DataStoreError(
                .invalidConfiguration, "OpenSSL's scrypt refused the parameters n=\(n) r=\(r) p=\(p)",
                remedy: "The store's encryption header is damaged, or needs more memory than the system allows")
        }
        return try EncryptionKey(bytes: key)
    }
}
