import CModelStoreCrypto
import ModelStore

/// AES-256-GCM sealing and opening under one key, with a fresh 96-bit nonce per seal: the
/// authenticated cipher of the encrypted file stores, public for adapter authors.
///
/// A sealed box is `nonce (12 bytes) | ciphertext (as long as the plaintext) | tag (16 bytes)`,
/// 28 bytes more than the plaintext. The associated data is authenticated but not stored: pass the
/// same bytes to ``open(_:associatedData:)`` (a record's file and position, so a record moved or
/// copied elsewhere fails to open).
///
/// A cipher's first nonce is 12 random bytes (`RAND_bytes`); each next one adds 1 to the last 8
/// bytes, read as a big-endian number, as the SQLite page cipher counts its nonces. Nothing needs to
/// be remembered between processes, which lets several processes write one store: two ciphers (two
/// processes, or one reopened) repeat a nonce only if their runs of nonces overlap, which is less
/// likely than two random nonces being equal, and a seal costs no call to the random generator.
/// NIST SP 800-38D bounds random 96-bit nonces at 2³² seals per key; rotate the key
/// (`modelstore rekey`) well before a store has written that many records.
public struct AES256GCM: Sendable {
    /// The bytes a sealed box adds to its plaintext: the nonce and the tag.
    public static let overhead = nonceSize + tagSize
    /// The nonce's size.
    public static let nonceSize = 12
    /// The tag's size.
    public static let tagSize = 16

    let sealing: CipherContexts
    let opening: CipherContexts
    /// The last nonce this cipher sealed with, `nil` before its first seal.
    private let lastNonce = LockedValue<[UInt8]?>(nil)

    /// A cipher with `key`.
    public init(key: EncryptionKey) {
        sealing = CipherContexts(key: key, encrypting: true)
        opening = CipherContexts(key: key, encrypting: false)
    }

    /// Writes the next nonce to `nonce` (see the type's summary).
    func nextNonce(_ nonce: UnsafeMutablePointer<UInt8>) throws {
        let next = try lastNonce.withLock { last -> [UInt8] in
            guard var counted = last else {
                var first = [UInt8](repeating: 0, count: Self.nonceSize)
                guard RAND_bytes(&first, Int32(Self.nonceSize)) == 1 else {
                    throw DataStoreError(
                        .io, "the system's random generator (OpenSSL RAND_bytes) failed",
                        remedy: "Check that the system has an entropy source (/dev/urandom) and try again")
                }
                last = first
                return first
            }
            for index in stride(from: Self.nonceSize - 1, through: Self.nonceSize - 8, by: -1) {
                counted[index] &+= 1
                if counted[index] != 0 { break }
            }
            last = counted
            return counted
        }
        for index in 0..<Self.nonceSize { nonce[index] = next[index] }
    }

    /// Appends the sealed box of `plaintext` to `output`: the plaintext is copied in once and
    /// encrypted where it lands.
    public func seal(
        _ plaintext: UnsafeRawBufferPointer, associatedData: UnsafeRawBufferPointer, appendingTo output: inout [UInt8]
    ) throws {
        let start = output.count
        let nonce = [UInt8](repeating: 0, count: Self.nonceSize)
        output.append(contentsOf: nonce)
        output.append(contentsOf: plaintext)
        output.append(contentsOf: nonce + [UInt8](repeating: 0, count: Self.tagSize - Self.nonceSize))
        do {
            try output.withUnsafeMutableBytes { raw in
                try seal(
                    inPlace: UnsafeMutableRawBufferPointer(rebasing: raw[start...]), associatedData: associatedData)
            }
        } catch {
            output.removeSubrange(start...)
            throw error
        }
    }

    /// Seals `box` in place: on entry its first 12 bytes are free, then comes the plaintext, then
    /// 16 free bytes; on return it is the sealed box (nonce, ciphertext, tag). No copy of the
    /// plaintext is made, for records that are large.
    public func seal(inPlace box: UnsafeMutableRawBufferPointer, associatedData: UnsafeRawBufferPointer) throws {
        precondition(box.count >= Self.overhead, "a box has room for a nonce and a tag")
        try seal(nil, into: box, associatedData: associatedData)
    }

    /// Writes the sealed box of `plaintext` to `box`, which must be exactly ``overhead`` bytes longer
    /// and may be uninitialized memory: the plaintext is read once, as it is encrypted, and never
    /// copied, for a large document sealed into a buffer of its own.
    public func seal(
        _ plaintext: UnsafeRawBufferPointer, associatedData: UnsafeRawBufferPointer,
        into box: UnsafeMutableRawBufferPointer
    ) throws {
        precondition(box.count == plaintext.count + Self.overhead, "a box is the plaintext's size plus the overhead")
        try seal(plaintext.baseAddress, into: box, associatedData: associatedData)
    }

    /// Seals the bytes at `source` (the box's own plaintext, after the nonce, when `nil`) into `box`.
    private func seal(
        _ source: UnsafeRawPointer?, into box: UnsafeMutableRawBufferPointer, associatedData: UnsafeRawBufferPointer
    ) throws {
        let length = box.count - Self.overhead
        let nonce = box.baseAddress!.assumingMemoryBound(to: UInt8.self)
        try nextNonce(nonce)
        let text = nonce + Self.nonceSize
        let input = source.map { $0.assumingMemoryBound(to: UInt8.self) } ?? UnsafePointer(text)
        let ok = sealing.with { context in
            modelstore_aes256gcm_seal_with(
                context, nonce, associatedData.baseAddress?.assumingMemoryBound(to: UInt8.self),
                Int32(associatedData.count), input, Int32(length), text, text + length)
        }
        guard ok == 1 else { throw DataStoreError(.io, "OpenSSL could not encrypt \(length) bytes with AES-256-GCM") }
    }

    /// The sealed box of `plaintext`.
    public func seal(_ plaintext: [UInt8], associatedData: [UInt8] = []) throws -> [UInt8] {
        var output: [UInt8] = []
        output.reserveCapacity(plaintext.count + Self.overhead)
        try plaintext.withUnsafeBytes { text in
            try associatedData.withUnsafeBytes { try seal(text, associatedData: $0, appendingTo: &output) }
        }
        return output
    }

    /// The plaintext of a sealed box, or `nil` when it does not authenticate: a wrong key, a changed
    /// or missing byte, other associated data, or a box too short to be one. Nothing of an
    /// unauthenticated box is returned.
    public func open(_ box: UnsafeRawBufferPointer, associatedData: UnsafeRawBufferPointer) -> [UInt8]? {
        guard box.count >= Self.overhead else { return nil }
        let length = box.count - Self.overhead
        var ok: Int32 = 0
        let plaintext = [UInt8](unsafeUninitializedCapacity: max(length, 1)) { buffer, initialized in
            let nonce = box.baseAddress!.assumingMemoryBound(to: UInt8.self)
            ok =
                opening.with { context in
                    modelstore_aes256gcm_open_with(
                        context, nonce, associatedData.baseAddress?.assumingMemoryBound(to: UInt8.self),
                        Int32(associatedData.count), nonce + Self.nonceSize, Int32(length),
                        nonce + Self.nonceSize + length, buffer.baseAddress!)
                } ?? 0
            initialized = length
        }
        return ok == 1 ? plaintext : nil
    }

    /// The plaintext of a sealed box, or `nil` when it does not authenticate.
    public func open(_ box: [UInt8], associatedData: [UInt8] = []) -> [UInt8]? {
        box.withUnsafeBytes { raw in associatedData.withUnsafeBytes { open(raw, associatedData: $0) } }
    }
}
