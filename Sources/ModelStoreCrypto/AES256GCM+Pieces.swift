import CModelStoreCrypto
import ModelStore

extension AES256GCM {
    /// The size of the pieces ``seal(_:associatedData:after:pieceSize:writingPiecesTo:)`` hands out by
    /// default: small enough to stay in the processor's cache and in the allocator's heap, large enough
    /// that a file write per piece costs nothing next to the bytes it writes.
    public static let defaultPieceSize = 1 << 16

    /// Seals `plaintext` and hands `write` the sealed box in order, in pieces of at most `pieceSize`
    /// bytes (`prefix` first, copied in front of the box), from one buffer reused for every piece.
    ///
    /// The bytes are those ``seal(_:associatedData:appendingTo:)`` appends, but no buffer as large as
    /// the plaintext is made: a document of megabytes is encrypted piece by piece as it is written to
    /// its file. A piece is only valid during the call that receives it. If `write` throws, the seal
    /// stops and the error is rethrown.
    public func seal(
        _ plaintext: UnsafeRawBufferPointer, associatedData: UnsafeRawBufferPointer,
        after prefix: UnsafeRawBufferPointer = UnsafeRawBufferPointer(start: nil, count: 0),
        pieceSize: Int = defaultPieceSize, writingPiecesTo write: (UnsafeRawBufferPointer) throws -> Void
    ) throws {
        let capacity = max(pieceSize, prefix.count + Self.overhead)
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: capacity, alignment: 16)
        defer { buffer.deallocate() }
        let bytes = buffer.baseAddress!.assumingMemoryBound(to: UInt8.self)
        if !prefix.isEmpty { buffer.copyMemory(from: prefix) }
        var filled = prefix.count
        let nonce = bytes + filled
        try nextNonce(nonce)
        filled += Self.nonceSize
        let sealed = try sealing.with { context -> Bool in
            let aad = associatedData.baseAddress?.assumingMemoryBound(to: UInt8.self)
            guard modelstore_aes256gcm_seal_begin(context, nonce, aad, Int32(associatedData.count)) == 1 else {
                return false
            }
            var done = 0
            while done < plaintext.count {
                let count = min(capacity - filled, plaintext.count - done)
                let input = plaintext.baseAddress!.assumingMemoryBound(to: UInt8.self) + done
                guard modelstore_aes256gcm_seal_piece(context, input, Int32(count), bytes + filled) == 1 else {
                    return false
                }
                done += count
                filled += count
                if filled == capacity {
                    try write(UnsafeRawBufferPointer(buffer))
                    filled = 0
                }
            }
            if capacity - filled < Self.tagSize {
                try write(UnsafeRawBufferPointer(rebasing: buffer[..<filled]))
                filled = 0
            }
            guard modelstore_aes256gcm_seal_end(context, bytes + filled) == 1 else { return false }
            filled += Self.tagSize
            try write(UnsafeRawBufferPointer(rebasing: buffer[..<filled]))
            return true
        }
        guard sealed == true else {
            throw DataStoreError(.io, "OpenSSL could not encrypt \(plaintext.count) bytes with AES-256-GCM")
        }
    }

    /// Opens the sealed box `box` where it is: on success the plaintext is `box`'s bytes after the
    /// nonce and before the tag (its first ``nonceSize`` bytes on), and the result is `true`.
    ///
    /// On `false` (a wrong key, a changed or missing byte, other associated data, a box too short to
    /// be one) the bytes between nonce and tag are zeroed, so nothing unauthenticated is left to read.
    /// For a file read into a buffer of its own, which then needs no second buffer.
    public func open(inPlace box: UnsafeMutableRawBufferPointer, associatedData: UnsafeRawBufferPointer) -> Bool {
        guard box.count >= Self.overhead else { return false }
        let length = box.count - Self.overhead
        let nonce = box.baseAddress!.assumingMemoryBound(to: UInt8.self)
        let text = nonce + Self.nonceSize
        let ok = opening.with { context in
            modelstore_aes256gcm_open_with(
                context, nonce, associatedData.baseAddress?.assumingMemoryBound(to: UInt8.self),
                Int32(associatedData.count), text, Int32(length), text + length, text)
        }
        guard ok == 1 else {
            UnsafeMutableRawBufferPointer(start: text, count: length).initializeMemory(as: UInt8.self, repeating: 0)
            return false
        }
        return true
    }
}
