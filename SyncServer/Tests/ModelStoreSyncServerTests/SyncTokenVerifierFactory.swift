import Foundation
import ModelStoreSyncServer

/// Tokens signed with keys the servers under test do not have.
enum SyncTokenVerifierFactory {
    static func otherKeyToken() async throws -> String {
        let verifier = try await SyncTokenVerifier.hs256(secret: Data((0..<32).map { _ in UInt8.random(in: 0...255) }))
        return try await verifier.sign(subject: "alice", expires: Date().addingTimeInterval(3600))
    }
}
