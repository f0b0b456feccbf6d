import Foundation
import ModelStoreSyncServer
import SyncTestModels
import Testing

/// HTTPS with `--tls-certificate` and `--tls-key`: a self-signed certificate for 127.0.0.1, made
/// by openssl, that the clients here trust explicitly (curl with `--cacert`, and the sync client,
/// whose URLSession reads the system's CA bundle, in a mount namespace where that bundle is the
/// certificate).
@Suite(.enabled(if: Database.isConfigured, Database.skipMessage))
struct SyncServerTLSTests {
    /// A certificate and key for 127.0.0.1 in `directory`.
    static func certificate(in directory: URL) throws -> (certificate: URL, key: URL) {
        let certificate = directory.appendingPathComponent("server.crt")
        let key = directory.appendingPathComponent("server.key")
        let result = try run(
            "openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256",
            "-nodes", "-days", "1", "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1",
            "-keyout", key.path, "-out", certificate.path)
        try #require(result.status == 0, "openssl failed: \(result.output)")
        return (certificate, key)
    }

    /// Runs a program found on the path and returns its exit status and output.
    static func run(_ arguments: String...) throws -> (status: Int32, output: String) { try command(arguments) }

    @Test func theServerSpeaksHTTPSWithTheGivenCertificateOnly() async throws {
        let fixture = try await Fixture()
        defer { fixture.remove() }
        let (certificate, key) = try Self.certificate(in: fixture.directory)
        let server = try ServerProcess(fixture, extra: ["--tls-certificate", certificate.path, "--tls-key", key.path])
        #expect(server.baseURL.scheme == "https")
        let token = try await fixture.token("alice")
        let url = server.baseURL.appendingPathComponent("schema").absoluteString
        let trusted = try Self.run(
            "curl", "-sS", "--cacert", certificate.path, "-H", "Authorization: Bearer \(token)", url)
        #expect(trusted.status == 0 && trusted.output.contains("\"entities\""), "\(trusted.output)")
        // A client that does not trust the certificate fails the handshake (curl's 60).
        let untrusted = try Self.run("curl", "-sS", "-H", "Authorization: Bearer \(token)", url)
        #expect(untrusted.status == 60, "\(untrusted.output)")
        // Plain HTTP to the TLS port gets no HTTP answer.
        let plain = try Self.run(
            "curl", "-sS", "-o", "/dev/null", "-w", "%{http_code}", "--max-time", "5",
            "http://127.0.0.1:\(server.port)/sync/schema")
        #expect(plain.status != 0 || plain.output.hasPrefix("000"), "\(plain.output)")
        #expect(!server.log.contains(token))
    }

    @Test func aCertificateFromTheEnvironmentAloneServesHTTPS() async throws {
        let fixture = try await Fixture()
        defer { fixture.remove() }
        let (certificate, key) = try Self.certificate(in: fixture.directory)
        let server = try ServerProcess(
            fixture,
            environment: ["MODELSTORE_SYNC_TLS_CERTIFICATE": certificate.path, "MODELSTORE_SYNC_TLS_KEY": key.path])
        #expect(server.baseURL.scheme == "https")
        let token = try await fixture.token("alice")
        let trusted = try Self.run(
            "curl", "-sS", "--cacert", certificate.path, "-H", "Authorization: Bearer \(token)",
            server.baseURL.appendingPathComponent("schema").absoluteString)
        #expect(trusted.status == 0 && trusted.output.contains("\"entities\""), "\(trusted.output)")
    }

    /// Whether this process may make a mount namespace (root with CAP_SYS_ADMIN, as in CI).
    static let canMount = (try? command(["unshare", "--mount", "true"]))?.status == 0

    @Test(.enabled(if: canMount, "needs a mount namespace (root) to make the client trust the certificate"))
    func syncClientsConvergeOverHTTPS() async throws {
        let fixture = try await Fixture()
        defer { fixture.remove() }
        let (certificate, key) = try Self.certificate(in: fixture.directory)
        let server = try ServerProcess(fixture, extra: ["--tls-certificate", certificate.path, "--tls-key", key.path])
        let client = ServerProcess.executable.deletingLastPathComponent().appendingPathComponent("sync-test-client")
        let tokenFile = try await fixture.tokenFile("alice")
        /// The sync client in a mount namespace whose system CA bundle is the server's certificate.
        func trusting(_ store: String, _ action: String...) throws -> String {
            let script = "mount --bind \"$1\" /etc/ssl/certs/ca-certificates.crt && shift && exec \"$@\""
            let result = try command(
                [
                    "unshare", "--mount", "--propagation", "private", "sh", "-c", script, "sh",
                    certificate.path, client.path, store, server.baseURL.absoluteString, tokenFile.path, "10",
                ]
                    + action)
            return result.output
        }
        let phone = "sqlite:" + fixture.directory.appendingPathComponent("phone.sqlite").path
        let laptop = "json:" + fixture.directory.appendingPathComponent("laptop.json").path
        #expect(try trusting(phone, "add", "alice", "groceries", "books").hasPrefix("added 2"))
        #expect(try trusting(phone, "sync").hasPrefix("synced pushed=2"))
        #expect(try trusting(laptop, "sync").hasPrefix("synced pushed=0 pulled=2"))
        #expect(try trusting(laptop, "list").contains("groceries"))
        // Outside the namespace the same client does not trust the certificate: the round fails.
        let refused = try Self.run(
            client.path, laptop, server.baseURL.absoluteString, tokenFile.path, "10", "sync")
        #expect(refused.output.hasPrefix("failed:"), "\(refused.output)")
    }
}
