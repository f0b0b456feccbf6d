import Foundation
import NIOSSL

/// The certificate and private key a ``SyncServer`` serves HTTPS with
/// (``SyncServer/run(host:port:path:tls:logger:onRunning:)``).
public struct SyncServerTLS: Sendable {
    /// The server side of the TLS handshake: the certificate chain and the key.
    public let configuration: TLSConfiguration

    /// Serves HTTPS with `configuration` as it is (protocol versions, ciphers, client certificates).
    public init(configuration: TLSConfiguration) {
        self.configuration = configuration
    }

    /// Reads a PEM certificate chain (the server's certificate first, then any intermediates) and
    /// its PEM private key (RSA or EC; not encrypted).
    ///
    /// Throws ``SyncServerConfigurationError`` naming the file that is missing or not PEM; the
    /// message never quotes the key.
    public static func reading(certificateFile: String, keyFile: String) throws -> SyncServerTLS {
        for (file, what) in [(certificateFile, "certificate"), (keyFile, "private key")]
        where !FileManager.default.isReadableFile(atPath: file) {
            throw SyncServerConfigurationError(
                "the TLS \(what) file '\(file)' cannot be read", remedy: "Check the path and the file's permissions")
        }
        let chain: [NIOSSLCertificate]
        do {
            chain = try NIOSSLCertificate.fromPEMFile(certificateFile)
        } catch {
            throw SyncServerConfigurationError(
                "the TLS certificate file '\(certificateFile)' holds no PEM certificate (\(type(of: error)))",
                remedy: "Pass the server's certificate in PEM ('-----BEGIN CERTIFICATE-----'), intermediates after it")
        }
        guard !chain.isEmpty else {
            throw SyncServerConfigurationError(
                "the TLS certificate file '\(certificateFile)' holds no certificate",
                remedy: "Pass the server's certificate in PEM ('-----BEGIN CERTIFICATE-----'), intermediates after it")
        }
        let key: NIOSSLPrivateKey
        do {
            key = try NIOSSLPrivateKey(file: keyFile, format: .pem)
        } catch {
            throw SyncServerConfigurationError(
                "the TLS private key file '\(keyFile)' holds no unencrypted PEM private key (\(type(of: error)))",
                remedy: "Pass the certificate's key in PEM ('-----BEGIN PRIVATE KEY-----'), without a passphrase")
        }
        var configuration = TLSConfiguration.makeServerConfiguration(
            certificateChain: chain.map { .certificate($0) }, privateKey: .privateKey(key))
        configuration.minimumTLSVersion = .tlsv12
        return SyncServerTLS(configuration: configuration)
    }
}
