import CModelStoreCrypto
import Foundation
import ModelStore

/// The keys of `@Attribute(.encrypted)` attributes, for the whole process.
///
/// An encrypted attribute's value is sealed with AES-256-GCM before it leaves the process, in every
/// store (PostgreSQL included) and in sync's change sets, so the store, its files and the server
/// hold only the sealed bytes. Give the keys once, before the first save or fetch that touches an
/// encrypted attribute:
///
/// ```swift
/// try AttributeEncryption.useKeys(current: .environment("TRIPS_FIELD_KEY"))
/// ```
///
/// The current key seals every value saved from then on; the previous keys only open values they
/// sealed, so a key is rotated by moving it to `previous` and giving a new current one (each sealed
/// value names, by a 4-byte fingerprint, the key that sealed it; a model saved again is sealed
/// under the current key).
///
/// Sealing is deterministic: the nonce is derived (HMAC-SHA256) from the key, the attribute's name
/// and the value, so equal values of one attribute are stored as equal bytes. That keeps
/// uniqueness constraints, upserts and sync's change tracking working on sealed values, and it
/// tells someone with the files which models share a value of an attribute; it tells them nothing
/// else about the value but its length. A sealed value is bound to its attribute's name: moved
/// into another attribute, it fails to open.
public enum AttributeEncryption {
    /// Seals new values under `current`, and opens values sealed under it or any of `previous`.
    ///
    /// A passphrase is refused here: derive its key with ``passphraseKey(_:saltFile:environment:)``,
    /// which keeps the salt in a file, and pass that. Throws
    /// ``DataStoreError/Code/invalidConfiguration`` naming the source that cannot be read.
    public static func useKeys(
        current: EncryptionKeySource, previous: [EncryptionKeySource] = [],
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws {
        let keys = try ([current] + previous).map { source in
            if source.isPassphrase {
                throw DataStoreError(
                    .invalidConfiguration, "\(source) cannot be an attribute key by itself: a passphrase needs a salt",
                    remedy: "Derive the key with AttributeEncryption.passphraseKey(_:saltFile:), which keeps the salt "
                        + "in a file you name, or give 32 random bytes (openssl rand -hex 32)")
            }
            return try AttributeKey(try source.resolve(derivation: .none, environment: environment))
        }
        AttributeSealing.sealer = AttributeCipher(keys: keys)
    }

    /// Forgets the keys: saving or reading an encrypted attribute fails until keys are given again.
    public static func removeKeys() {
        AttributeSealing.sealer = nil
    }
}

/// One attribute key and what is derived from it.
private struct AttributeKey: Sendable {
    /// The first 4 bytes of the key's fingerprint, stored in every value it seals.
    let identifier: [UInt8]
    /// Derives each value's nonce.
    let nonceKey: [UInt8]
    let sealing: CipherContexts
    let opening: CipherContexts

    init(_ key: EncryptionKey) throws {
        let master = key.withUnsafeBytes { Array($0) }
        identifier = Array(try HMACSHA256.mac(key: master, Array("modelstore attribute key id".utf8)).prefix(4))
        nonceKey = try HMACSHA256.mac(key: master, Array("modelstore attribute nonce key".utf8))
        let cipherKey = try EncryptionKey(
            bytes: try HMACSHA256.mac(key: master, Array("modelstore attribute cipher key".utf8)))
        sealing = CipherContexts(key: cipherKey, encrypting: true)
        opening = CipherContexts(key: cipherKey, encrypting: false)
    }
}

/// Seals attribute values: `version (1) | key identifier (4) | nonce (12) | ciphertext | tag (16)`,
/// with the version, the key identifier and the attribute's name as associated data.
private struct AttributeCipher: AttributeSealer {
    static let version: UInt8 = 1
    static let headerSize = 1 + 4 + AES256GCM.nonceSize
    let keys: [AttributeKey]

    func seal(_ plaintext: [UInt8], attribute: String) throws -> [UInt8] {
        let key = keys[0]
        let name = Array(attribute.utf8)
        let nonce = try HMACSHA256.mac(key: key.nonceKey, name + [0] + plaintext).prefix(AES256GCM.nonceSize)
        let associated = [Self.version] + key.identifier + name
        var output = [Self.version] + key.identifier + nonce
        output += [UInt8](repeating: 0, count: plaintext.count + AES256GCM.tagSize)
        let length = plaintext.count
        let ok = output.withUnsafeMutableBufferPointer { box in
            let base = box.baseAddress!
            return key.sealing.with { context in
                modelstore_aes256gcm_seal_with(
                    context, base + 5, associated, Int32(associated.count), plaintext, Int32(length),
                    base + Self.headerSize, base + Self.headerSize + length)
            }
        }
        guard ok == 1 else {
            throw DataStoreError(.io, "OpenSSL could not encrypt a value of the attribute '\(attribute)'")
        }
        return output
    }

    func open(_ sealed: [UInt8], attribute: String) throws -> [UInt8] {
        guard sealed.count >= Self.headerSize + AES256GCM.tagSize, sealed[0] == Self.version else {
            throw DataStoreError(
                .corrupted, "a value of the encrypted attribute '\(attribute)' is not one ModelStore sealed",
                remedy: "Restore the store from a backup, or set the property to another value")
        }
        let identifier = Array(sealed[1..<5])
        guard let key = keys.first(where: { $0.identifier == identifier }) else {
            throw DataStoreError(
                .wrongKey,
                "a value of the encrypted attribute '\(attribute)' was sealed under an attribute key this process "
                    + "does not hold (key fingerprint \(identifier.map { String(format: "%02x", $0) }.joined()))",
                remedy: "Give that key to AttributeEncryption.useKeys, as the current key or among the previous ones")
        }
        let associated = [Self.version] + identifier + Array(attribute.utf8)
        let length = sealed.count - Self.headerSize - AES256GCM.tagSize
        var plaintext = [UInt8](repeating: 0, count: max(length, 1))
        let ok = sealed.withUnsafeBufferPointer { box in
            let base = box.baseAddress!
            return plaintext.withUnsafeMutableBufferPointer { output in
                key.opening.with { context in
                    modelstore_aes256gcm_open_with(
                        context, base + 5, associated, Int32(associated.count), base + Self.headerSize,
                        Int32(length), base + Self.headerSize + length, output.baseAddress!)
                }
            }
        }
        guard ok == 1 else {
            throw DataStoreError(
                .corrupted,
                "a value of the encrypted attribute '\(attribute)' fails authentication: it was changed, or it "
                    + "belongs to another attribute",
                remedy: "Restore the store from a backup, or set the property to another value")
        }
        return Array(plaintext.prefix(length))
    }
}

/// HMAC-SHA256 from OpenSSL.
enum HMACSHA256 {
    /// The 32-byte MAC of `message` under `key`.
    static func mac(key: [UInt8], _ message: [UInt8]) throws -> [UInt8] {
        var output = [UInt8](repeating: 0, count: 32)
        var length: UInt32 = 0
        let result = output.withUnsafeMutableBufferPointer { out in
            HMAC(EVP_sha256(), key, Int32(key.count), message, message.count, out.baseAddress, &length)
        }
        guard result != nil, length == 32 else { throw DataStoreError(.io, "OpenSSL could not compute an HMAC-SHA256") }
        return output
    }
}
