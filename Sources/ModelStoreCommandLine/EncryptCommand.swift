import Foundation
import ModelStore
import ModelStoreTooling

/// `modelstore encrypt URL --key-env NAME`: encrypts a plaintext store in place, atomically.
enum EncryptCommand: Command {
    static let name = "encrypt"
    static let arguments = ["URL"]
    static var options: [CommandOption] { EncryptionChange.newKeyOptions }
    static let summary = "encrypt a plaintext json:, log: or sqlite: store in place, atomically"
    static let details = """
        Rewrites the store under the key the option names, with AES-256-GCM: a JSON file is sealed
        whole (and its backup), an append log record by record into a new directory beside it that
        then takes the log's place in one atomic swap, an SQLite database page by page (VACUUM INTO
        a copy through the page cipher, renamed over it); its .externalStorage files are sealed under
        new names in the same step. A crash at any instant leaves the plaintext store or the encrypted
        one, never a mix. The store must not be open (its lock is taken).
        The key option names where the key is (never the key itself): an environment variable
        holding 64 hexadecimal digits ('openssl rand -hex 32'), a file, or an environment variable
        holding a passphrase (scrypt derives the key, with a salt the store keeps). Open the store
        afterwards with the same option in its URL: json:trips.json?key-env=TRIPS_KEY.

        Examples:
          modelstore encrypt json:trips.json --key-env TRIPS_KEY
          modelstore encrypt log:trips-log --passphrase-env TRIPS_PASSPHRASE
          modelstore encrypt sqlite:trips.sqlite --key-file /etc/trips/key
        """

    static func run(_ invocation: Invocation, console: Console) throws -> any CommandReport {
        let source = invocation.arguments[0]
        guard !EncryptionChange.hasKey(source) else {
            throw ToolError.usage(
                "'\(source)' names a key, so its store is already encrypted",
                remedy: "Change its key with 'modelstore rekey', or decrypt it with 'modelstore decrypt'")
        }
        let key = try EncryptionChange.newKey(invocation, missing: "no key was given to encrypt '\(source)' with")
        return try EncryptionChange.run(
            command: name, source: source, target: EncryptionChange.url(source, withKey: key), console: console)
    }
}
