import Foundation
import JWTKit
import ModelStoreSyncServer
import Testing

/// Tokens signed with keys the servers under test do not have.
enum SyncTokenVerifierFactory {
    static func otherKeyToken() async throws -> String {
        let verifier = try await SyncTokenVerifier.hs256(secret: Data((0..<32).map { _ in UInt8.random(in: 0...255) }))
        return try await verifier.sign(subject: "alice", expires: Date().addingTimeInterval(3600))
    }
}

/// What a bearer token must be to become a `SyncAccess`: signed with the server's key, by the
/// key's algorithm, unexpired, with a subject.
struct SyncTokenVerifierTests {
    private func keyFile(_ text: String) throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("key-\(UUID().uuidString)").path
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
        return path
    }

    private func status(_ body: () async throws -> Void) async -> Int? {
        do {
            try await body()
            return nil
        } catch let failure as SyncServerFailure {
            return Int(failure.status.code)
        } catch {
            return -1
        }
    }

    @Test func anES256KeyFileVerifiesTokensOfItsKeyOnly() async throws {
        let key = ES256PrivateKey()
        let signer = try await SyncTokenVerifier.reading(keyFile: try keyFile(key.pemRepresentation))
        #expect(signer.algorithm == "ES256")
        let token = try await signer.sign(
            subject: "alice", expires: Date().addingTimeInterval(60), claims: ["team": "blue"])
        // A server holding only the public key verifies it and keeps the other claims.
        let server = try await SyncTokenVerifier.reading(keyFile: try keyFile(key.publicKey.pemRepresentation))
        let access = try await server.access(for: token)
        #expect(access.subject == "alice")
        #expect(access.claims == ["team": "blue"])
        // A token of another P-256 key, and an HS256 token, are refused.
        let stranger = try await SyncTokenVerifier.es256(pem: ES256PrivateKey().pemRepresentation)
        let foreign = try await stranger.sign(subject: "alice", expires: Date().addingTimeInterval(60))
        #expect(await status { _ = try await server.access(for: foreign) } == 401)
        let symmetric = try await SyncTokenVerifierFactory.otherKeyToken()
        #expect(await status { _ = try await server.access(for: symmetric) } == 401)
        #expect(await status { _ = try await server.sign(subject: "x", expires: Date()) } == -1)
    }

    @Test func tokensWithoutSubjectOrExpiryOrNotYetValidAreRefused() async throws {
        let secret = String(repeating: "k", count: 32)
        let verifier = try await SyncTokenVerifier.hs256(secret: Data(secret.utf8))
        let keys = JWTKeyCollection()
        await keys.add(hmac: HMACKey(from: secret), digestAlgorithm: .sha256)
        struct Claims: JWTPayload {
            var sub: String?
            var exp: Int?
            var nbf: Int?
            func verify(using algorithm: some JWTAlgorithm) async throws {}
        }
        let now = Int(Date().timeIntervalSince1970)
        let noSubject = try await keys.sign(Claims(sub: nil, exp: now + 60))
        let noExpiry = try await keys.sign(Claims(sub: "alice", exp: nil))
        let early = try await keys.sign(Claims(sub: "alice", exp: now + 600, nbf: now + 300))
        let fine = try await keys.sign(Claims(sub: "alice", exp: now + 600, nbf: now - 10))
        #expect(await status { _ = try await verifier.access(for: noSubject) } == 401)
        #expect(await status { _ = try await verifier.access(for: noExpiry) } == 401)
        #expect(await status { _ = try await verifier.access(for: early) } == 401)
        #expect(try await verifier.access(for: fine).subject == "alice")
    }

    @Test func aShortSecretIsRefusedAtStartup() async throws {
        await #expect(throws: SyncServerConfigurationError.self) {
            _ = try await SyncTokenVerifier.reading(keyFile: try keyFile("short secret\n"))
        }
    }
}
