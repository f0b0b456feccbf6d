import ModelStore

extension DataStoreError.Code {
    /// The key given does not open the encrypted store; nothing was read or changed.
    public static let wrongKey = DataStoreError.Code("wrongKey")
    /// The store is encrypted and no key was given; nothing was read or changed.
    public static let keyRequired = DataStoreError.Code("keyRequired")
}

extension DataStoreError {
    /// A pattern matching every wrong-key error: `catch DataStoreError.wrongKey { … }`.
    public static let wrongKey = DataStoreError(.wrongKey, "the key does not open the encrypted store")
    /// A pattern matching every missing-key error: `catch DataStoreError.keyRequired { … }`.
    public static let keyRequired = DataStoreError(.keyRequired, "the store is encrypted and no key was given")

    /// The error for a key from `source` that does not open `store`, naming both (never the key).
    public static func wrongKey(
        store: String, source: EncryptionKeySource, detail: String?, file: String = #fileID, line: Int = #line
    ) -> DataStoreError {
        let message = "\(source) does not open the encrypted store '\(store)'" + (detail.map { ": \($0)" } ?? "")
        return untouched(
            .wrongKey, message,
            "Give the key or passphrase the store was encrypted with ('modelstore rekey' changes it)",
            file, line)
    }

    /// The error for an encrypted `store` opened without a key.
    public static func keyRequired(store: String, file: String = #fileID, line: Int = #line) -> DataStoreError {
        untouched(
            .keyRequired, "the store '\(store)' is encrypted, and no key was given",
            "Give its key: the configuration's 'encryption', or 'key-env=NAME', 'key-file=PATH' or "
                + "'passphrase-env=NAME' in the store URL", file, line)
    }

    /// The error for a plaintext `store` opened with a key.
    public static func notEncrypted(store: String, file: String = #fileID, line: Int = #line) -> DataStoreError {
        untouched(
            .invalidConfiguration, "the store '\(store)' is not encrypted, but a key was given",
            "Open it without a key, or encrypt it first with 'modelstore encrypt'", file, line)
    }

    private static func untouched(
        _ code: Code, _ message: String, _ remedy: String, _ file: String, _ line: Int
    ) -> DataStoreError {
        DataStoreError(code, message, remedy: remedy + "; the store was not read or changed", file: file, line: line)
    }
}
