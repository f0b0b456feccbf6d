import Foundation
import ModelStore
import ModelStoreCrypto

/// The encrypted form of a JSON store's file: a two-line clear header, then the whole document
/// sealed with AES-256-GCM.
///
/// ```
/// ModelStore encrypted JSON 1
/// aes-256-gcm kdf=none check=4be1…
/// <nonce, ciphertext of the document, tag>
/// ```
///
/// The second line is the ``EncryptionHeader`` (cipher, key derivation, key check), and it is the
/// associated data of the sealed document, so neither can be changed without the open failing.
/// The file is rewritten whole on every save anyway, so sealing it whole costs one pass of AES-GCM
/// over bytes the save writes.
enum DocumentEncryption {
    static let signature = Array("ModelStore encrypted JSON 1\n".utf8)

    /// Whether `bytes` are an encrypted document.
    static func isEncrypted(_ bytes: [UInt8]) -> Bool { bytes.starts(with: signature) }

    /// The clear header line and where the sealed box starts, or throws ``DataStoreError/Code/corrupted``.
    static func header(of bytes: [UInt8], document: String) throws -> (line: String, header: EncryptionHeader, box: Int)
    {
        let start = signature.count
        guard isEncrypted(bytes), let newline = bytes[start...].prefix(4096).firstIndex(of: UInt8(ascii: "\n")) else {
            throw DataStoreError(
                .corrupted, "the encrypted JSON store '\(document)' has no encryption header",
                remedy: "Restore the file from its backup ('\(document).backup')")
        }
        let line = String(decoding: bytes[start..<newline], as: UTF8.self)
        return (line, try EncryptionHeader(decoding: line, store: document), newline + 1)
    }

    /// The document inside an encrypted file, unlocking its key through `keys`.
    ///
    /// Throws ``DataStoreError/Code/keyRequired`` without a key source, ``DataStoreError/Code/wrongKey``
    /// for a key that is not the store's, and ``DataStoreError/Code/corrupted`` when the sealed
    /// document fails authentication (a changed, missing or added byte).
    static func open(_ bytes: [UInt8], document: String, keys: DocumentKeys?) throws -> [UInt8] {
        var file = bytes
        let plaintext = try decrypt(&file, document: document, keys: keys)
        return Array(file[plaintext])
    }

    /// Decrypts the encrypted file `bytes` where they lie and returns the range of `bytes` that then
    /// holds the document (between the nonce and the tag): opening a large store makes no second
    /// buffer of its size and moves no byte. Throws as ``open(_:document:keys:)`` does; `bytes` are
    /// then unchanged, or, after a failed authentication, hold no plaintext.
    static func decrypt(_ bytes: inout [UInt8], document: String, keys: DocumentKeys?) throws -> Range<Int> {
        guard let keys else { throw DataStoreError.keyRequired(store: document) }
        let (line, header, box) = try header(of: bytes, document: document)
        let cipher = try keys.unlock(line: line, header: header, document: document)
        let opened = bytes.withUnsafeMutableBytes { raw in
            Array(line.utf8).withUnsafeBytes {
                cipher.open(inPlace: UnsafeMutableRawBufferPointer(rebasing: raw[box...]), associatedData: $0)
            }
        }
        guard opened else {
            throw DataStoreError(
                .corrupted,
                "the encrypted JSON store '\(document)' fails authentication: bytes of it were changed, cut off or "
                    + "added after it was written",
                remedy: "Restore the file from its backup ('\(document).backup')",
                underlyingError: JSONFileDamage(
                    file: document, line: 3, column: 1, offset: box, reason: "the sealed document fails authentication")
            )
        }
        return (box + AES256GCM.nonceSize)..<(bytes.count - AES256GCM.tagSize)
    }

    /// The error for a file without the signature, opened with a key: a plaintext store (a JSON
    /// object) is refused as such; anything else is damage.
    static func notEncrypted(_ bytes: [UInt8], document: String) -> DataStoreError {
        let first = bytes.first { ![0x20, 0x09, 0x0A, 0x0D].contains($0) }
        guard first == UInt8(ascii: "{") else {
            return DataStoreError(
                .corrupted,
                "the encrypted JSON store '\(document)' does not start with the signature 'ModelStore encrypted JSON 1'",
                remedy: "Restore the file from its backup ('\(document).backup')",
                underlyingError: JSONFileDamage(
                    file: document, line: 1, column: 1, offset: 0, reason: "the file has no encryption signature"))
        }
        return DataStoreError.notEncrypted(store: document)
    }

    /// The encrypted file for `document`'s bytes, under the store's current key.
    static func seal(_ document: UnsafeRawBufferPointer, keys: DocumentKeys) throws -> [UInt8] {
        var file: [UInt8] = []
        file.reserveCapacity(signature.count + 4096 + document.count + AES256GCM.overhead)
        try seal(document, keys: keys) { file.append(contentsOf: $0) }
        return file
    }

    /// Hands `write` the encrypted file for `document`'s bytes, under the store's current key, in
    /// pieces of ``AES256GCM/defaultPieceSize`` bytes or fewer: a save encrypts the document as it
    /// writes it, through one small buffer, instead of making a copy of the document's size.
    static func seal(
        _ document: UnsafeRawBufferPointer, keys: DocumentKeys,
        writingPiecesTo write: (UnsafeRawBufferPointer) throws -> Void
    ) throws {
        let (line, cipher) = try keys.current()
        let lineBytes = Array(line.utf8)
        let head = signature + lineBytes + [UInt8(ascii: "\n")]
        try head.withUnsafeBytes { head in
            try lineBytes.withUnsafeBytes {
                try cipher.seal(document, associatedData: $0, after: head, writingPiecesTo: write)
            }
        }
    }
}

/// The keys of an encrypted JSON store: where the key comes from, and the ciphers unlocked so far
/// (by header line), so that a passphrase is derived once per store, not once per read.
///
/// Shared by the copies of one configuration; the key is held only in memory.
final class DocumentKeys: Sendable {
    let source: EncryptionKeySource
    private let unlocked = LockedValue<(byLine: [String: AES256GCM], current: (String, AES256GCM)?)>(([:], nil))

    init(source: EncryptionKeySource) { self.source = source }

    /// The cipher for a file with this header, checked against its key check; it becomes the one
    /// saves write with.
    func unlock(line: String, header: EncryptionHeader, document: String) throws -> AES256GCM {
        if let known = unlocked.withLock({ $0.byLine[line] }) {
            unlocked.withLock { $0.current = (line, known) }
            return known
        }
        let cipher = try header.unlock(with: source, store: document)
        unlocked.withLock {
            $0.byLine[line] = cipher
            $0.current = (line, cipher)
        }
        return cipher
    }

    /// The header line and cipher a save writes with: the file's own, or new ones for a new file.
    func current() throws -> (line: String, cipher: AES256GCM) {
        if let current = unlocked.withLock({ $0.current }) { return current }
        let (header, cipher) = try EncryptionHeader.create(for: source)
        let line = header.encoded
        unlocked.withLock {
            $0.byLine[line] = cipher
            $0.current = (line, cipher)
        }
        return (line, cipher)
    }
}
