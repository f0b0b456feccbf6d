import Foundation
import ModelStore
import ModelStoreTooling

/// `modelstore rekey URL?key-env=OLD --key-env NEW`: changes an encrypted store's key, atomically.
enum RekeyCommand: Command {
    static let name = "rekey"
    static let arguments = ["URL"]
    static var options: [CommandOption] { EncryptionChange.newKeyOptions }
    static let summary = "change the key of an encrypted json:, log: or sqlite: store, atomically"
    static let details = """
        Rewrites the store, opened with the key its URL names, under the key the option names:
        every record (or SQLite page) is decrypted and sealed again with a new random nonce, so
        the old key opens nothing afterwards (a copy taken before still opens with it), and so is
        every .externalStorage file, under a new name. Atomic: a
        crash at any instant leaves the store under the old key or under the new one. The store
        must not be open. A plaintext store is encrypted with 'modelstore encrypt' instead.

        Examples:
          modelstore rekey 'json:trips.json?key-env=OLD_KEY' --key-env NEW_KEY
          modelstore rekey 'log:trips-log?passphrase-env=OLD_PHRASE' --key-file /etc/trips/key
        """

    static func run(_ invocation: Invocation, console: Console) throws -> any CommandReport {
        let source = invocation.arguments[0]
        guard EncryptionChange.hasKey(source) else {
            throw ToolError.usage(
                "'\(source)' names no key to open the store with",
                remedy: "Add its current key to the URL (?key-env=NAME); a plaintext store is encrypted with "
                    + "'modelstore encrypt'")
        }
        let key = try EncryptionChange.newKey(invocation, missing: "no new key was given for '\(source)'")
        return try EncryptionChange.run(
            command: name, source: source, target: EncryptionChange.url(source, withKey: key), console: console)
    }
}
