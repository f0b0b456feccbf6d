import Foundation
import JWTKit
import ModelStoreSync

/// Turns a bearer token into the ``ModelStoreSync/SyncAccess`` a request syncs as: a JWT signed with
/// the server's key (HS256 with a shared secret, or ES256 with a P-256 key), not expired, with a
/// subject. The subject becomes ``ModelStoreSync/SyncAccess/subject``; the token's other string,
/// number and boolean claims become ``ModelStoreSync/SyncAccess/claims``.
public struct SyncTokenVerifier: Sendable {
    private let keys: JWTKeyCollection
    /// What the key is, for the startup line: `HS256` or `ES256`.
    public let algorithm: String

    /// The shortest HS256 secret accepted, in bytes (the digest's size).
    public static let minimumSecretLength = 32

    /// A verifier for HS256 tokens signed with `secret`, which must be at least
    /// ``minimumSecretLength`` bytes.
    public static func hs256(secret: Data) async throws -> SyncTokenVerifier {
        guard secret.count >= minimumSecretLength else {
            throw SyncServerConfigurationError(
                "the HS256 secret is \(secret.count) bytes, shorter than \(minimumSecretLength)",
                remedy: "Use a random secret of at least \(minimumSecretLength) bytes, such as 'openssl rand -hex 32'")
        }
        let keys = JWTKeyCollection()
        await keys.add(hmac: HMACKey(from: secret), digestAlgorithm: .sha256)
        return SyncTokenVerifier(keys: keys, algorithm: "HS256")
    }

    /// A verifier for ES256 tokens, from a PEM public key, or a private key (which can also sign).
    public static func es256(pem: String) async throws -> SyncTokenVerifier {
        let keys = JWTKeyCollection()
        if pem.contains("PRIVATE KEY") {
            await keys.add(ecdsa: try ES256PrivateKey(pem: pem))
        } else {
            await keys.add(ecdsa: try ES256PublicKey(pem: pem))
        }
        return SyncTokenVerifier(keys: keys, algorithm: "ES256")
    }

    /// A verifier from a key file: a PEM EC key for ES256, anything else a secret for HS256 (the
    /// file's bytes, with a trailing newline removed).
    public static func reading(keyFile path: String) async throws -> SyncTokenVerifier {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw SyncServerConfigurationError(
                "the JWT key file '\(path)' cannot be read", remedy: "Check the path and its permissions")
        }
        let text = String(decoding: data, as: UTF8.self)
        if text.contains("-----BEGIN") {
            do {
                return try await es256(pem: text)
            } catch let error as SyncServerConfigurationError {
                throw error
            } catch {
                throw SyncServerConfigurationError(
                    "the JWT key file '\(path)' holds a PEM block that is not a P-256 (ES256) key",
                    remedy: "Write a P-256 public or private key, such as 'openssl ecparam -name prime256v1 -genkey'")
            }
        }
        var secret = data
        while let last = secret.last, last == 0x0A || last == 0x0D { secret.removeLast() }
        return try await hs256(secret: secret)
    }

    /// Who `token` says the requester is; throws a 401 ``SyncServerFailure`` that does not quote it.
    public func access(for token: String) async throws -> SyncAccess {
        let claims: SyncTokenClaims
        do {
            claims = try await keys.verify(token, as: SyncTokenClaims.self)
        } catch let failure as SyncServerFailure {
            throw failure
        } catch {
            throw SyncServerFailure.unauthorized(Self.reason(error))
        }
        return SyncAccess(subject: claims.subject, claims: claims.others)
    }

    /// Signs `claims` with this verifier's key when it holds a secret or a private key: for tests
    /// and for minting tokens with the server's own key.
    public func sign(subject: String, expires: Date, claims: [String: String] = [:]) async throws -> String {
        try await keys.sign(SyncTokenClaims(subject: subject, expires: expires, others: claims))
    }

    private static func reason(_ error: any Error) -> String {
        guard let error = error as? JWTError else { return "the bearer token could not be verified" }
        switch error.errorType {
        case .claimVerificationFailure: return "the bearer token has expired or is not valid yet"
        case .signatureVerificationFailed: return "the bearer token's signature does not match the server's key"
        case .malformedToken: return "the bearer token is not a well-formed JWT"
        default: return "the bearer token could not be verified"
        }
    }
}

/// A token's claims: `sub` and `exp` required, `nbf` checked when present, the rest kept as text.
struct SyncTokenClaims: JWTPayload {
    var subject: String
    var expires: Date
    var notBefore: Date?
    var others: [String: String]

    init(subject: String, expires: Date, others: [String: String]) {
        self.subject = subject
        self.expires = expires
        self.notBefore = nil
        self.others = others
    }

    private struct Key: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(_ string: String) { stringValue = string }
        init?(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: Key.self)
        guard let subject = try? container.decode(String.self, forKey: Key("sub")), !subject.isEmpty else {
            throw SyncServerFailure.unauthorized("the bearer token has no subject ('sub' claim)")
        }
        guard let exp = try? container.decode(Double.self, forKey: Key("exp")) else {
            throw SyncServerFailure.unauthorized("the bearer token has no expiry ('exp' claim)")
        }
        self.subject = subject
        self.expires = Date(timeIntervalSince1970: exp)
        self.notBefore = (try? container.decode(Double.self, forKey: Key("nbf"))).map(Date.init(timeIntervalSince1970:))
        var others: [String: String] = [:]
        for key in container.allKeys where !["sub", "exp", "nbf", "iat"].contains(key.stringValue) {
            if let text = try? container.decode(String.self, forKey: key) {
                others[key.stringValue] = text
            } else if let flag = try? container.decode(Bool.self, forKey: key) {
                others[key.stringValue] = flag ? "true" : "false"
            } else if let number = try? container.decode(Int64.self, forKey: key) {
                others[key.stringValue] = String(number)
            } else if let number = try? container.decode(Double.self, forKey: key) {
                others[key.stringValue] = String(number)
            }
        }
        self.others = others
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: Key.self)
        try container.encode(subject, forKey: Key("sub"))
        try container.encode(Int64(expires.timeIntervalSince1970), forKey: Key("exp"))
        for (name, value) in others { try container.encode(value, forKey: Key(name)) }
    }

    func verify(using algorithm: some JWTAlgorithm) async throws {
        let now = Date()
        guard expires > now else { throw SyncServerFailure.unauthorized("the bearer token has expired") }
        if let notBefore, notBefore > now.addingTimeInterval(60) {
            throw SyncServerFailure.unauthorized("the bearer token is not valid yet ('nbf' is in the future)")
        }
    }
}

/// The server's configuration cannot be used: what is wrong and how to fix it.
public struct SyncServerConfigurationError: Error, Sendable, CustomStringConvertible {
    /// What is wrong, on what.
    public var message: String
    /// How to fix it.
    public var remedy: String

    /// An error.
    public init(_ message: String, remedy: String) {
        self.message = message
        self.remedy = remedy
    }

    /// `message. remedy`.
    public var description: String { "\(message). \(remedy)" }
}
