import Foundation
import ModelStore
import ModelStoreTooling

/// `modelstore decrypt URL?key-env=NAME`: decrypts a store in place, atomically.
enum DecryptCommand: Command {
    static let name = "decrypt"
    static let arguments = ["URL"]
    static let summary = "decrypt an encrypted json:, log: or sqlite: store in place, atomically"
    static let details = """
        Rewrites the store, opened with the key its URL names, as plaintext, its .externalStorage
        files too: atomically (a crash at any instant leaves the encrypted store or the plaintext
        one), with the store closed.
        Its files are then readable by anyone who can read them (see 'modelstore verify' for their
        permissions).

        Examples:
          modelstore decrypt 'json:trips.json?key-env=TRIPS_KEY'
          modelstore decrypt 'log:trips-log?key-file=/etc/trips/key'
        """

    static func run(_ invocation: Invocation, console: Console) throws -> any CommandReport {
        let source = invocation.arguments[0]
        guard EncryptionChange.hasKey(source) else {
            throw ToolError.usage(
                "'\(source)' names no key to open the store with",
                remedy: "Add its key to the URL: ?key-env=NAME, ?key-file=PATH or ?passphrase-env=NAME")
        }
        return try EncryptionChange.run(
            command: name, source: source, target: EncryptionChange.url(source, withKey: nil), console: console)
    }
}
