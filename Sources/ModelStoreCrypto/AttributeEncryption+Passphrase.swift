import Foundation
import ModelStore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

extension AttributeEncryption {
    /// The attribute key scrypt derives from a passphrase with the salt kept in `saltFile`, to pass
    /// to ``useKeys(current:previous:environment:)``.
    ///
    /// ```swift
    /// try AttributeEncryption.useKeys(
    ///     current: try AttributeEncryption.passphraseKey(
    ///         .passphraseEnvironment("PATIENT_FIELD_PASSPHRASE"), saltFile: "/etc/patients/field-key.salt"))
    /// ```
    ///
    /// The salt file holds one line, as a store's encryption header: the cipher, scrypt's parameters
    /// (n = 2¹⁵, r = 8, p = 1) with a random 16-byte salt, and a key check. The first call makes it
    /// (mode 0600, never replacing a file another process made at the same moment); later calls
    /// read it. Nothing in it is secret, but every process that reads or writes the values, the
    /// replicas that sync them included, needs the same file: attribute keys are the process's, and
    /// sealed values move between stores as they are, so the salt cannot live in one store.
    ///
    /// Throws ``DataStoreError/Code/wrongKey`` when the passphrase is not the one the file was made
    /// with (its key check fails), ``DataStoreError/Code/corrupted`` for a file that is not a salt
    /// file, and ``DataStoreError/Code/invalidConfiguration`` for a source that is not a passphrase or
    /// cannot be read. Derivation costs about 32 MiB and 0.1 s of one core, once per call.
    public static func passphraseKey(
        _ passphrase: EncryptionKeySource, saltFile: String,
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws -> EncryptionKeySource {
        guard passphrase.isPassphrase else {
            throw DataStoreError(
                .invalidConfiguration, "\(passphrase) is not a passphrase, so it needs no salt file",
                remedy: "Give it to AttributeEncryption.useKeys(current:previous:) as it is")
        }
        let path = (saltFile as NSString).expandingTildeInPath
        if let line = try SaltFile.read(path) {
            return try key(passphrase, header: line, path: path, environment: environment)
        }
        let (header, _) = try EncryptionHeader.create(for: passphrase, environment: environment)
        // Another process may make the file at the same moment: the first one written is everyone's.
        let line = try SaltFile.create(path, line: header.encoded) ?? header.encoded
        return try key(passphrase, header: line, path: path, environment: environment)
    }

    /// The key of `passphrase` under the salt file's header `line`, once its key check proves it.
    private static func key(
        _ passphrase: EncryptionKeySource, header line: String, path: String, environment: [String: String]
    ) throws -> EncryptionKeySource {
        let header = try EncryptionHeader(decoding: line, store: path)
        guard case .scrypt = header.derivation else {
            throw DataStoreError(
                .corrupted, "the attribute salt file '\(path)' does not describe a passphrase's key derivation",
                remedy: "Restore the file from a replica or a backup; without it the values sealed under the "
                    + "passphrase's key cannot be opened")
        }
        let key = try passphrase.resolve(derivation: header.derivation, environment: environment)
        guard header.opens(AES256GCM(key: key)) else {
            throw DataStoreError(
                .wrongKey,
                "\(passphrase) is not the passphrase of the attribute key whose salt is in '\(path)'",
                remedy: "Give the passphrase the salt file was made with; for a new passphrase, use a new salt file "
                    + "and keep the old key among the previous keys until every model has been saved again")
        }
        return .key(key)
    }
}

/// The file that keeps an attribute passphrase's salt: one header line, written once.
private enum SaltFile {
    /// The file's line, or `nil` when there is no file.
    static func read(_ path: String) throws -> String? {
        guard FileManager.default.fileExists(atPath: path) else { return nil }
        guard let data = FileManager.default.contents(atPath: path) else {
            throw DataStoreError(
                .invalidConfiguration, "the attribute salt file '\(path)' cannot be read",
                remedy: "Check that this user may read it")
        }
        return String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Writes `line` to a new file at `path`, flushed, unless one appears there first; returns the
    /// line of the file that was there first, or `nil` when this call made it.
    static func create(_ path: String, line: String) throws -> String? {
        let temporary = path + ".tmp-" + String(UInt32.random(in: .min ... .max), radix: 16)
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw failure("create", temporary) }
        defer { unlink(temporary) }
        let bytes = Array((line + "\n").utf8)
        let written = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
        let synced = fsync(descriptor)
        close(descriptor)
        guard written == bytes.count, synced == 0 else { throw failure("write", temporary) }
        // A hard link never replaces a file: the loser of a race reads the winner's salt.
        guard link(temporary, path) == 0 else {
            if errno == EEXIST { return try read(path) }
            throw failure("create", path)
        }
        return nil
    }

    private static func failure(_ verb: String, _ path: String) -> DataStoreError {
        DataStoreError(
            .io, "cannot \(verb) the attribute salt file '\(path)': \(String(cString: strerror(errno)))",
            remedy: "Check that the folder exists and that this user may write to it")
    }
}
