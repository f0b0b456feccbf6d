import Foundation
import ModelStore
import ModelStoreTooling

/// What `encrypt`, `decrypt` and `rekey` share: the new key's options, the store URL under the new
/// key, and the run through the scheme's maintenance with a progress bar.
enum EncryptionChange {
    /// The options that name where a store's key comes from, in a store URL.
    static let keyOptions = ["key-env", "key-file", "passphrase-env"]

    /// `--key-env NAME`, `--key-file PATH` and `--passphrase-env NAME`: the new key.
    static let newKeyOptions = [
        CommandOption(name: "--key-env", value: "NAME", summary: "the new key is in this environment variable"),
        CommandOption(name: "--key-file", value: "PATH", summary: "the new key is in this file"),
        CommandOption(
            name: "--passphrase-env", value: "NAME", summary: "derive the new key from the passphrase in it"),
    ]

    /// The key option of the command line as a store URL option (`key-env=NAME`); `missing` says
    /// what the key was for when there is none.
    static func newKey(_ invocation: Invocation, missing: String) throws -> String {
        let given = keyOptions.compactMap { name in invocation.value("--" + name).map { "\(name)=\($0)" } }
        guard given.count <= 1 else {
            throw ToolError.usage(
                "more than one new key was given: \(given.map { "'\($0)'" }.joined(separator: ", "))",
                remedy: "Give the new key one way only")
        }
        guard let key = given.first else {
            throw ToolError.usage(missing, remedy: "Add --key-env NAME, --key-file PATH or --passphrase-env NAME")
        }
        return key
    }

    /// `url` without its key options, then with `key` (`key-env=NAME`) if one is given.
    static func url(_ url: String, withKey key: String?) -> String {
        let parts = url.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)
        var options = parts.count > 1 ? parts[1].split(separator: "&").map(String.init) : []
        options.removeAll { option in keyOptions.contains { option.hasPrefix($0 + "=") } }
        if let key { options.append(key) }
        return String(parts[0]) + (options.isEmpty ? "" : "?" + options.joined(separator: "&"))
    }

    /// Whether `url` names a key.
    static func hasKey(_ url: String) -> Bool { Self.url(url, withKey: nil) != url }

    /// Rewrites the store `source` names under the key `target` names, with a progress bar.
    static func run(
        command: String, source: String, target: String, console: Console
    ) throws -> any CommandReport {
        let reference = try StoreReference(source)
        let (maintenance, request) = try reference.maintenance(for: command)
        let targetReference = try StoreReference(target)
        let targetRequest = StoreMaintenanceRequest(
            name: target, url: targetReference.url, configuration: try targetReference.configuration())
        let progress = console.progress()
        defer { progress.finish() }
        var phase: (started: Bool, done: Int) = (false, 0)
        let report = try maintenance.changeEncryption(request, to: targetRequest) { done, total in
            if !phase.started {
                progress.phase(command == "decrypt" ? "decrypting" : "encrypting", total: total)
                phase.started = true
            }
            progress.advance(by: max(0, done - phase.done))
            phase.done = done
        }
        return MaintenanceCommandReport(url: reference.string, report: report)
    }
}
