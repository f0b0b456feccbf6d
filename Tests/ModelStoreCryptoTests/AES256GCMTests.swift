import Foundation
import ModelStore
import ModelStoreCrypto
import ModelStoreTestSupport
import Testing

/// The cipher: what it seals only the same key and associated data open, and any change is caught.
struct AES256GCMTests {
    private let cipher: AES256GCM

    init() throws {
        cipher = AES256GCM(key: try EncryptionKey.random())
    }

    @Test func aSealedBoxOpensToThePlaintextAndIsTwentyEightBytesLonger() throws {
        for length in [0, 1, 15, 16, 17, 4096, 100_003] {
            let plaintext = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 31) }
            let box = try cipher.seal(plaintext, associatedData: Array("segment 1 at 20".utf8))
            #expect(box.count == length + AES256GCM.overhead)
            #expect(cipher.open(box, associatedData: Array("segment 1 at 20".utf8)) == plaintext)
            if length >= 16 { #expect(!box.contains(plaintext[0..<16]), "the plaintext shows in the box") }
        }
    }

    /// A box sealed into a buffer of its own, from plaintext that stays where it is, opens as any other,
    /// and sealing in place gives a box that opens to the same plaintext.
    @Test func aBoxSealedIntoItsOwnBufferOrInPlaceOpens() throws {
        let data = Array("document".utf8)
        for length in [0, 1, 17, 100_003] {
            let plaintext = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ 3) }
            let box = try [UInt8](unsafeUninitializedCapacity: length + AES256GCM.overhead) { buffer, initialized in
                try plaintext.withUnsafeBytes { text in
                    try data.withUnsafeBytes {
                        try cipher.seal(text, associatedData: $0, into: UnsafeMutableRawBufferPointer(buffer))
                    }
                }
                initialized = buffer.count
            }
            #expect(cipher.open(box, associatedData: data) == plaintext)
            if length >= 16 { #expect(!box.contains(plaintext[0..<16]), "the plaintext shows in the box") }
            var inPlace =
                [UInt8](repeating: 0, count: AES256GCM.nonceSize) + plaintext
                + [UInt8](repeating: 0, count: AES256GCM.tagSize)
            try inPlace.withUnsafeMutableBytes { raw in
                try data.withUnsafeBytes { try cipher.seal(inPlace: raw, associatedData: $0) }
            }
            #expect(cipher.open(inPlace, associatedData: data) == plaintext)
        }
    }

    @Test func threadsSealAndOpenAtOnce() throws {
        let cipher = self.cipher
        let failures = LockedValue(0)
        DispatchQueue.concurrentPerform(iterations: 8) { thread in
            for index in 0..<300 {
                let plaintext = [UInt8](repeating: UInt8(thread), count: index)
                let data = Array("thread \(thread) record \(index)".utf8)
                guard let box = try? cipher.seal(plaintext, associatedData: data),
                    cipher.open(box, associatedData: data) == plaintext
                else {
                    failures.withLock { $0 += 1 }
                    continue
                }
            }
        }
        #expect(failures.withLock { $0 } == 0)
    }

    @Test func twoSealsOfTheSameBytesDiffer() throws {
        let plaintext = Array("same".utf8)
        #expect(try cipher.seal(plaintext) != cipher.seal(plaintext))
    }

    @Test func everyFlippedBitTruncationAndOtherAssociatedDataFailsToOpen() throws {
        let associated = Array("checkpoint 4 chunk 0".utf8)
        let box = try cipher.seal(Array("a record of a store".utf8), associatedData: associated)
        for index in box.indices {
            var flipped = box
            flipped[index] ^= 0x01
            #expect(cipher.open(flipped, associatedData: associated) == nil, "byte \(index) flipped")
        }
        for length in 0..<box.count {
            #expect(cipher.open(Array(box.prefix(length)), associatedData: associated) == nil, "cut to \(length)")
        }
        #expect(cipher.open(box, associatedData: Array("checkpoint 4 chunk 1".utf8)) == nil)
        #expect(AES256GCM(key: try EncryptionKey.random()).open(box, associatedData: associated) == nil)
    }
}

/// Keys and where they come from: bytes, the environment, a file, a passphrase; never printed.
struct EncryptionKeyTests {
    private static let hex = "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f"

    @Test func aKeyIsThirtyTwoBytesFromBytesHexOrBase64() throws {
        let bytes = (0..<32).map { UInt8($0) }
        let key = try EncryptionKey(bytes: bytes)
        #expect(try EncryptionKey(text: Self.hex + "\n", origin: "a test") == key)
        #expect(try EncryptionKey(text: Data(bytes).base64EncodedString(), origin: "a test") == key)
        let error = try #require(throws: DataStoreError.self) { try EncryptionKey(bytes: bytes.dropLast()) }
        #expect(error.code == .invalidConfiguration)
        #expect(error.message.contains("31 bytes"))
        let text = try #require(throws: DataStoreError.self) {
            try EncryptionKey(text: "correct horse", origin: "the environment variable 'K'")
        }
        #expect(text.message.contains("'K'"))
        #expect(!text.description.contains("correct horse"))
    }

    @Test func noDescriptionOrErrorShowsTheSecret() throws {
        let key = try EncryptionKey(text: Self.hex, origin: "a test")
        for text in ["\(key)", String(reflecting: key), "\(EncryptionKeySource.key(key))"] {
            #expect(!text.contains("0001020304"), "\(text)")
        }
        let passphrase = EncryptionKeySource.passphrase("my secret phrase")
        var dumped = ""
        dump([passphrase, .key(key)], to: &dumped)
        #expect(!dumped.contains("KeyStorage") && !dumped.contains("bytes"), "\(dumped)")
        for text in ["\(passphrase)", String(reflecting: passphrase), dumped, "\(Optional(passphrase) as Any)"] {
            #expect(!text.contains("secret") && !text.contains("0001020304"), "\(text)")
        }
        let (header, _) = try EncryptionHeader.create(for: .key(key))
        let wrong = try #require(throws: DataStoreError.self) {
            try header.unlock(with: .key(try EncryptionKey.random()), store: "trips.json")
        }
        #expect(!wrong.description.contains("0001020304"))
        #expect(!header.encoded.contains(Self.hex))
    }

    @Test func sourcesReadTheEnvironmentAndFiles() throws {
        let directory = try TemporaryDirectory()
        let key = try EncryptionKey(text: Self.hex, origin: "a test")
        let environment = ["STORE_KEY": Self.hex]
        #expect(
            try EncryptionKeySource.environment("STORE_KEY").resolve(derivation: .none, environment: environment) == key
        )
        let missing = try #require(throws: DataStoreError.self) {
            try EncryptionKeySource.environment("NO_SUCH_KEY").resolve(derivation: .none, environment: [:])
        }
        #expect(missing.message.contains("'NO_SUCH_KEY'"))
        try Data((0..<32).map { UInt8($0) }).write(to: directory.file("raw.key"))
        try Data((Self.hex + "\n").utf8).write(to: directory.file("hex.key"))
        #expect(try EncryptionKeySource.file(directory.path("raw.key")).resolve(derivation: .none) == key)
        #expect(try EncryptionKeySource.file(directory.path("hex.key")).resolve(derivation: .none) == key)
        let unreadable = try #require(throws: DataStoreError.self) {
            try EncryptionKeySource.file(directory.path("none.key")).resolve(derivation: .none)
        }
        #expect(unreadable.message.contains("none.key"))
    }

    @Test func withoutAnEnvironmentGivenAVariableIsReadFromTheProcesses() throws {
        let name = "MODELSTORE_TEST_KEY_\(UInt32.random(in: .min ... .max))"
        setenv(name, Self.hex, 1)
        defer { unsetenv(name) }
        let key = try EncryptionKey(text: Self.hex, origin: "a test")
        #expect(try EncryptionKeySource.environment(name).resolve(derivation: .none) == key)
        #expect(throws: DataStoreError.self) {
            try EncryptionKeySource.environment(name).resolve(derivation: .none, environment: [:])
        }
        unsetenv(name)
        let missing = try #require(throws: DataStoreError.self) {
            try EncryptionKeySource.environment(name).resolve(derivation: .none)
        }
        #expect(missing.code == .invalidConfiguration && missing.message.contains("'\(name)'"))
    }
}

/// The header a store keeps: the key check turns a wrong key into a typed error.
struct EncryptionHeaderTests {
    @Test func theRightKeyUnlocksAndAWrongOneIsATypedErrorNamingTheStore() throws {
        let key = try EncryptionKey.random()
        let (header, cipher) = try EncryptionHeader.create(for: .key(key))
        let decoded = try EncryptionHeader(decoding: header.encoded, store: "trips.json")
        #expect(decoded == header)
        let unlocked = try decoded.unlock(with: .key(key), store: "trips.json")
        let box = try cipher.seal(Array("hello".utf8))
        #expect(unlocked.open(box) == Array("hello".utf8))
        let error = try #require(throws: DataStoreError.self) {
            try decoded.unlock(with: .key(try EncryptionKey.random()), store: "trips.json")
        }
        #expect(error.code == .wrongKey)
        #expect(error.message.contains("'trips.json'"))
        #expect(error.remedy?.contains("not read or changed") == true)
        do {
            _ = try decoded.unlock(with: .passphrase("x"), store: "trips.json")
            Issue.record("a passphrase unlocked a store made with a key")
        } catch DataStoreError.wrongKey {
        }
    }

    @Test func aPassphraseDerivesTheKeyWithTheStoredSalt() throws {
        let (header, cipher) = try EncryptionHeader.create(for: .passphrase("correct horse battery staple"))
        guard case .scrypt(let n, _, _, let salt) = header.derivation else {
            Issue.record("a passphrase made no scrypt derivation")
            return
        }
        #expect(n == 1 << 15)
        #expect(salt.count == 16)
        let decoded = try EncryptionHeader(decoding: header.encoded, store: "log")
        let unlocked = try decoded.unlock(
            with: .passphraseEnvironment("PHRASE"), store: "log",
            environment: ["PHRASE": "correct horse battery staple"])
        #expect(unlocked.open(try cipher.seal([1, 2, 3])) == [1, 2, 3])
        let wrong = try #require(throws: DataStoreError.self) {
            try decoded.unlock(with: .passphrase("Correct horse battery staple"), store: "log")
        }
        #expect(wrong.code == .wrongKey)
        let (other, _) = try EncryptionHeader.create(for: .passphrase("correct horse battery staple"))
        #expect(other.derivation != header.derivation, "two stores share a salt")
    }

    @Test func aDamagedHeaderIsCorruptionNotACrash() throws {
        for line in [
            "", "aes-128-cbc kdf=none check=00", "aes-256-gcm kdf=none",
            "aes-256-gcm kdf=rot13 check="
                + String(repeating: "00", count: 28),
            "aes-256-gcm kdf=scrypt n=3 r=8 p=1 salt=00 check="
                + String(repeating: "00", count: 28),
        ] {
            let error = try #require(throws: DataStoreError.self, "\(line)") {
                try EncryptionHeader(decoding: line, store: "s")
            }
            #expect(error.code == .corrupted, "\(line)")
        }
    }
}

/// A cipher's nonces: random to start, then counted, so a seal draws no random bytes.
struct AES256GCMNonceTests {
    @Test func eachSealTakesTheNextNonceAndTwoCiphersStartApart() throws {
        let key = try EncryptionKey.random()
        let cipher = AES256GCM(key: key)
        let boxes = try (0..<3).map { _ in try cipher.seal(Array("same text".utf8)) }
        let nonces = boxes.map { Array($0.prefix(AES256GCM.nonceSize)) }
        func counter(_ nonce: [UInt8]) -> UInt64 { nonce.suffix(8).reduce(0) { $0 << 8 | UInt64($1) } }
        #expect(nonces[1].prefix(4) == nonces[0].prefix(4) && nonces[2].prefix(4) == nonces[0].prefix(4))
        #expect(counter(nonces[1]) == counter(nonces[0]) &+ 1 && counter(nonces[2]) == counter(nonces[1]) &+ 1)
        #expect(Set(boxes).count == 3, "the same plaintext seals to different boxes")
        for box in boxes { #expect(cipher.open(box) == Array("same text".utf8)) }
        let other = AES256GCM(key: key)
        #expect(try other.seal([1]).prefix(AES256GCM.nonceSize) != boxes[0].prefix(AES256GCM.nonceSize))
    }
}
