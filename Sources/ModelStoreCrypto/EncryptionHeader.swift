import Foundation
import ModelStore

/// What an encrypted store records about its encryption, in the clear: the cipher, how the key is
/// derived (with the passphrase's salt), and a key check, so that a wrong key is a typed error
/// before anything is read.
///
/// The key check is the sealed box of nothing, with the associated data `ModelStore key check`:
/// only the right key opens it, and it tells an attacker nothing about the key. Its text form is
/// one line a store keeps in its header:
///
/// ```
/// aes-256-gcm kdf=scrypt n=32768 r=8 p=1 salt=9f0c… check=4be1…
/// aes-256-gcm kdf=none check=4be1…
/// ```
public struct EncryptionHeader: Sendable, Hashable {
    /// The cipher's name; `aes-256-gcm` is the only one.
    public static let cipherName = "aes-256-gcm"
    private static let checkData = Array("ModelStore key check".utf8)

    /// How the key is made from what the app gives.
    public var derivation: KeyDerivation
    /// The sealed box that only the right key opens.
    public var keyCheck: [UInt8]

    /// A header for a new store whose key comes from `source`, and the cipher to write it with; a
    /// variable is read from `environment`, or from this process's environment when it is `nil`.
    public static func create(
        for source: EncryptionKeySource, environment: [String: String]? = nil
    ) throws -> (header: EncryptionHeader, cipher: AES256GCM) {
        let derivation = source.isPassphrase ? try KeyDerivation.newScrypt() : .none
        let cipher = AES256GCM(key: try source.resolve(derivation: derivation, environment: environment))
        let check = try cipher.seal([], associatedData: checkData)
        return (EncryptionHeader(derivation: derivation, keyCheck: check), cipher)
    }

    /// The cipher for the key from `source`, once the key check proves it is the store's key; a
    /// variable is read from `environment`, or from this process's environment when it is `nil`.
    ///
    /// Throws ``DataStoreError/Code/wrongKey`` naming `store` and the source when it is not.
    public func unlock(
        with source: EncryptionKeySource, store: String, environment: [String: String]? = nil
    ) throws -> AES256GCM {
        if case .none = derivation, source.isPassphrase {
            throw DataStoreError.wrongKey(
                store: store, source: source, detail: "it was encrypted with a key, not a passphrase")
        }
        if case .scrypt = derivation, !source.isPassphrase {
            throw DataStoreError.wrongKey(
                store: store, source: source, detail: "it was encrypted with a passphrase, not a key")
        }
        let cipher = AES256GCM(key: try source.resolve(derivation: derivation, environment: environment))
        guard opens(cipher) else { throw DataStoreError.wrongKey(store: store, source: source, detail: nil) }
        return cipher
    }

    /// Whether `cipher` opens the key check, that is, holds the key this header was made for.
    public func opens(_ cipher: AES256GCM) -> Bool {
        cipher.open(keyCheck, associatedData: Self.checkData) != nil
    }

    /// The header as one line of text (see the type's discussion).
    public var encoded: String {
        var text = Self.cipherName
        switch derivation {
        case .none:
            text += " kdf=none"
        case .scrypt(let n, let r, let p, let salt):
            text += " kdf=scrypt n=\(n) r=\(r) p=\(p) salt=\(Self.hex(salt))"
        }
        return text + " check=\(Self.hex(keyCheck))"
    }

    /// A header.
    public init(derivation: KeyDerivation, keyCheck: [UInt8]) {
        self.derivation = derivation
        self.keyCheck = keyCheck
    }

    /// Parses ``encoded``'s text; throws ``DataStoreError/Code/corrupted`` naming `store` when it is
    /// not a header this version reads.
    public init(decoding line: String, store: String) throws {
        func damaged(_ reason: String) -> DataStoreError {
            DataStoreError(
                .corrupted, "the encryption header of '\(store)' is damaged: \(reason)",
                remedy: "Restore the store from a backup; without its header an encrypted store cannot be read")
        }
        let words = line.split(separator: " ")
        guard words.first.map(String.init) == Self.cipherName else {
            throw damaged("it names the cipher '\(words.first ?? "")', not '\(Self.cipherName)'")
        }
        var fields: [String: String] = [:]
        for word in words.dropFirst() {
            guard let equals = word.firstIndex(of: "=") else { throw damaged("'\(word)' is not NAME=VALUE") }
            fields[String(word[..<equals])] = String(word[word.index(after: equals)...])
        }
        guard let check = fields["check"].flatMap(EncryptionKey.hexBytes), check.count == AES256GCM.overhead else {
            throw damaged("it has no key check")
        }
        switch fields["kdf"] {
        case "none":
            derivation = .none
        case "scrypt":
            guard let n = fields["n"].flatMap({ UInt64($0) }), let r = fields["r"].flatMap({ UInt64($0) }),
                let p = fields["p"].flatMap({ UInt64($0) }), let salt = fields["salt"].flatMap(EncryptionKey.hexBytes),
                n > 1, n.nonzeroBitCount == 1, r > 0, p > 0, !salt.isEmpty
            else { throw damaged("its scrypt parameters are incomplete") }
            derivation = .scrypt(n: n, r: r, p: p, salt: salt)
        default:
            throw damaged("it names no key derivation this version knows")
        }
        keyCheck = check
    }

    static func hex(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var text: [UInt8] = []
        text.reserveCapacity(bytes.count * 2)
        for byte in bytes {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 15)])
        }
        return String(decoding: text, as: UTF8.self)
    }
}
