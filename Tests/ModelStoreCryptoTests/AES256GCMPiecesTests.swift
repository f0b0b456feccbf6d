import Foundation
import ModelStore
import ModelStoreCrypto
import Testing

/// Sealing in pieces and opening in place: the same sealed boxes as the one-buffer calls.
struct AES256GCMPiecesTests {
    private let cipher: AES256GCM

    init() throws {
        cipher = AES256GCM(key: try EncryptionKey.random())
    }

    /// The pieces `cipher` hands out for `plaintext` after `prefix`.
    private func pieces(_ plaintext: [UInt8], prefix: [UInt8], pieceSize: Int, data: [UInt8]) throws -> [[UInt8]] {
        var pieces: [[UInt8]] = []
        try plaintext.withUnsafeBytes { text in
            try prefix.withUnsafeBytes { prefix in
                try data.withUnsafeBytes {
                    try cipher.seal(text, associatedData: $0, after: prefix, pieceSize: pieceSize) {
                        pieces.append(Array($0))
                    }
                }
            }
        }
        return pieces
    }

    @Test(arguments: [0, 1, 27, 28, 100, 4095, 4096, 4097, 70_000])
    func piecesJoinToABoxThatOpens(length: Int) throws {
        let plaintext = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        let prefix = Array("header line\n".utf8)
        let data = Array("associated".utf8)
        for pieceSize in [1, 16, 40, 4096] {
            let pieces = try pieces(plaintext, prefix: prefix, pieceSize: pieceSize, data: data)
            let capacity = max(pieceSize, prefix.count + AES256GCM.overhead)
            #expect(pieces.allSatisfy { !$0.isEmpty && $0.count <= capacity })
            let file = pieces.flatMap { $0 }
            #expect(file.count == prefix.count + length + AES256GCM.overhead)
            #expect(Array(file.prefix(prefix.count)) == prefix)
            let box = Array(file.dropFirst(prefix.count))
            #expect(cipher.open(box, associatedData: data) == plaintext)
            #expect(cipher.open(box, associatedData: Array("other".utf8)) == nil)
        }
    }

    @Test func aThrowingWriterStopsTheSealAndTheCipherStillWorks() throws {
        struct Stop: Error {}
        var calls = 0
        #expect(throws: Stop.self) {
            try [UInt8](repeating: 7, count: 10_000).withUnsafeBytes { text in
                try cipher.seal(text, associatedData: UnsafeRawBufferPointer(start: nil, count: 0), pieceSize: 100) {
                    _ in
                    calls += 1
                    if calls == 3 { throw Stop() }
                }
            }
        }
        #expect(calls == 3)
        let box = try cipher.seal([1, 2, 3])
        #expect(cipher.open(box) == [1, 2, 3])
    }

    @Test func aBoxOpensInPlaceAndADamagedOneIsZeroedNotOpened() throws {
        let plaintext = Array("the document, long enough to span blocks of sixteen bytes".utf8)
        let data = Array("line".utf8)
        var box = try cipher.seal(plaintext, associatedData: data)
        let opened = box.withUnsafeMutableBytes { raw in
            data.withUnsafeBytes { cipher.open(inPlace: raw, associatedData: $0) }
        }
        #expect(opened)
        #expect(Array(box[AES256GCM.nonceSize..<(box.count - AES256GCM.tagSize)]) == plaintext)

        var damaged = try cipher.seal(plaintext, associatedData: data)
        damaged[AES256GCM.nonceSize + 3] ^= 0x01
        let failed = damaged.withUnsafeMutableBytes { raw in
            data.withUnsafeBytes { cipher.open(inPlace: raw, associatedData: $0) }
        }
        #expect(!failed)
        #expect(damaged[AES256GCM.nonceSize..<(damaged.count - AES256GCM.tagSize)].allSatisfy { $0 == 0 })
        var short = [UInt8](repeating: 1, count: AES256GCM.overhead - 1)
        #expect(
            !short.withUnsafeMutableBytes { raw in
                cipher.open(inPlace: raw, associatedData: .init(start: nil, count: 0))
            })
    }
}
