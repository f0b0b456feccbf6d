import Foundation
import ModelStore
import ModelStoreAdapters
import ModelStorePostgreSQL
import ModelStoreSync
import ModelStoreSyncServer
import ModelStoreTooling

/// `modelstore-sync-server --store URL --jwt-key-file FILE [options]`: serves a shared store to sync clients.
let usage = """
    usage: modelstore-sync-server --store URL --jwt-key-file FILE [--schema FILE]
             [--host HOST] [--port N] [--path PATH] [--scope-attribute NAME]
             [--max-request-bytes N] [--rate N] [--poll-interval MS]
             [--change-notifications on|off] [--packed-changes on|off]
             [--group-commit on|off] [--tls-certificate FILE --tls-key FILE]
           modelstore-sync-server --jwt-key-file FILE --mint-token SUBJECT
             [--expires-in SECONDS] [--claim K=V]

    Serves the store at URL (postgres://USER:PASSWORD@HOST:PORT/DB, or sqlite:PATH,
    json:PATH, …) to ModelStore sync clients ('modelstore sync json:local.json
    http://HOST:PORT/PATH', or an app with HTTPSyncTransport) over HTTP: POST
    PATH/hello, push, pull and fetch carry the sync engine's JSON messages; GET
    PATH/changes is a stream of server-sent events telling clients when to pull; GET
    PATH/schema is the store's schema, for a new client. The server keeps no state
    of its own: run several processes on one PostgreSQL database, behind a load
    balancer or not, and a change pushed through one reaches the clients of every
    other: the process it went through sends a PostgreSQL NOTIFY, every process
    LISTENs on its own connection and reads the history at once, and each also reads
    it every poll interval while clients listen, which carries changes whose
    notification was missed (a dropped connection: it reconnects every second).

    --store URL              the shared store (env MODELSTORE_SYNC_STORE). Its
                             password is never printed.
    --schema FILE            the store's schema, as 'modelstore schema URL --json'
                             writes it (env MODELSTORE_SYNC_SCHEMA); needed for
                             postgres://, whose stores the server opens by this
                             schema (creating or lightly migrating tables as the app
                             would). Stores that record their schema (sqlite:,
                             json:, log:) are read without it.
    --jwt-key-file FILE      the key tokens are verified with (env
                             MODELSTORE_SYNC_JWT_KEY_FILE): a PEM P-256 key for
                             ES256 (public, or private to also mint), else a secret
                             of at least 32 bytes for HS256 (the file's bytes, a
                             trailing newline removed).
    --host HOST              the address to listen on (env MODELSTORE_SYNC_HOST;
                             default 127.0.0.1).
    --port N                 the port (env MODELSTORE_SYNC_PORT; default 8080; 0
                             picks a free one, printed).
    --path PATH              where the routes live (default 'sync').
    --scope-attribute NAME   each model of an entity with the String attribute NAME
                             belongs to the token's subject NAME holds: a client
                             pulls only its own, and a push that adds, changes or
                             deletes another's, gives one away, or links to
                             another's is refused whole (403 'refused'). Entities
                             without NAME are shared whole; in a class hierarchy,
                             NAME scopes the classes that declare or inherit it and
                             the others are shared whole. Without the option every
                             client holds everything (env
                             MODELSTORE_SYNC_SCOPE_ATTRIBUTE). Whatever the scope, a
                             replica (a client's store) syncs only with tokens of
                             the subject that first synced it; another's get 403
                             'replicaNotOwned'.
    --max-request-bytes N    the largest request body (default 8388608); larger ones
                             get 413.
    --rate N                 requests a second per subject on average (default 50;
                             bursts of 2N); more get 429 with Retry-After.
    --poll-interval MS       how often each process reads the store's newest
                             transaction while clients listen (env
                             MODELSTORE_SYNC_POLL_INTERVAL; default 1000 with change
                             notifications, 100 without).
    --change-notifications on|off
                             LISTEN/NOTIFY between the processes of a postgres://
                             store (env MODELSTORE_SYNC_CHANGE_NOTIFICATIONS;
                             default on; other stores have none, and their processes
                             learn of each other's changes by polling alone).
    --packed-changes on|off  change sets in the packed form (env
                             MODELSTORE_SYNC_PACKED_CHANGES; default on): every
                             answer says 'ModelStore-Sync-Forms: packed', pushes are
                             read packed or as JSON arrays, and a client that sends
                             the same header gets pulls and carried pages packed
                             (others get arrays). 'off' serves as a server from
                             before the form: no header, arrays only, packed pushes
                             refused 400.
    --group-commit on|off    commit the pushes that arrive while another push's save
                             to a postgres:// store is being committed together, in
                             one transaction (env MODELSTORE_SYNC_GROUP_COMMIT;
                             default on): one lock of the store's history counter
                             and one flush of its log per group rather than per
                             push. Each push is still checked and answered on its
                             own: a refused one changes nothing for the others, and
                             none is answered before the shared commit is durable.
                             The log line of each push shows the store's saves and
                             commits so far (store_saves, store_commits). Other
                             stores ignore it.
    --tls-certificate FILE   serve HTTPS (TLS 1.2 or newer) with this PEM
                             certificate chain, the server's certificate first (env
                             MODELSTORE_SYNC_TLS_CERTIFICATE); needs --tls-key.
    --tls-key FILE           the certificate's PEM private key, unencrypted (env
                             MODELSTORE_SYNC_TLS_KEY). Without both the server
                             speaks plain HTTP: keep it on loopback or a private
                             network, or put a TLS proxy in front.
    --mint-token SUBJECT     print a token for SUBJECT signed with the key file's
                             secret or private key, and exit (--expires-in SECONDS,
                             default 86400; --claim NAME=VALUE, repeatable).

    Tokens are JWTs with 'sub' (the subject) and 'exp' (the expiry) claims; 'nbf' is
    checked when present, and other claims reach the scope as text. Clients send
    them as 'Authorization: Bearer TOKEN'. Errors are JSON bodies {"code",
    "message", "remedy"} with a 4xx status for what the client must change (401
    token, 403 scope, 409 schema, 400/413/422 input: nothing stored) and 429/503 for
    what a retry fixes. Each request is logged (path, status, milliseconds) on
    standard output; no log line or error body quotes a token, a password or a
    stored value. LOG_LEVEL=debug logs more.
    """

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("modelstore-sync-server: \(message)\n".utf8))
    exit(2)
}

let environment = ProcessInfo.processInfo.environment
var options: [String: String] = [:]
var claims: [String: String] = [:]
let valued: Set<String> = [
    "--store", "--schema", "--jwt-key-file", "--host", "--port", "--path", "--scope-attribute",
    "--max-request-bytes", "--rate", "--mint-token", "--expires-in", "--claim", "--poll-interval",
    "--change-notifications", "--packed-changes", "--group-commit", "--tls-certificate", "--tls-key",
]
var arguments = Array(CommandLine.arguments.dropFirst())
while !arguments.isEmpty {
    let argument = arguments.removeFirst()
    if argument == "--help" || argument == "-h" {
        print(usage)
        exit(0)
    }
    guard valued.contains(argument) else { fail("unknown argument '\(argument)'; '--help' lists the options") }
    guard let value = arguments.first, !value.hasPrefix("--") else { fail("'\(argument)' needs a value") }
    arguments.removeFirst()
    if argument == "--claim" {
        let parts = value.split(separator: "=", maxSplits: 1)
        guard parts.count == 2 else { fail("'--claim' takes NAME=VALUE, not '\(value)'") }
        claims[String(parts[0])] = String(parts[1])
    } else {
        options[argument] = value
    }
}

@MainActor func option(_ name: String, _ variable: String? = nil) -> String? {
    options[name] ?? variable.flatMap { environment[$0] }.flatMap { $0.isEmpty ? nil : $0 }
}

@MainActor func number(_ name: String, _ variable: String?, default value: Int, range: ClosedRange<Int>) -> Int {
    guard let text = option(name, variable) else { return value }
    guard let number = Int(text), range.contains(number) else {
        fail("'\(name)' needs a number from \(range.lowerBound) to \(range.upperBound), not '\(text)'")
    }
    return number
}

guard let keyFile = option("--jwt-key-file", "MODELSTORE_SYNC_JWT_KEY_FILE") else {
    fail("name the key tokens are verified with: '--jwt-key-file FILE' (or MODELSTORE_SYNC_JWT_KEY_FILE)")
}
let verifier: SyncTokenVerifier
do {
    verifier = try await SyncTokenVerifier.reading(keyFile: keyFile)
} catch {
    fail("\(error)")
}

if let subject = options["--mint-token"] {
    let seconds = number("--expires-in", nil, default: 86_400, range: 1...(10 * 366 * 86_400))
    do {
        print(
            try await verifier.sign(
                subject: subject, expires: Date().addingTimeInterval(Double(seconds)), claims: claims))
        exit(0)
    } catch {
        fail("cannot mint a token with the key in '\(keyFile)': it holds a public key only (\(type(of: error)))")
    }
}

guard let storeURL = option("--store", "MODELSTORE_SYNC_STORE") else {
    fail("name the shared store: '--store postgres://…' (or MODELSTORE_SYNC_STORE)")
}
/// The store URL's password, kept out of every message.
let storePassword = URLComponents(string: storeURL)?.password.flatMap { $0.isEmpty ? nil : $0 }

/// `text` with the store's password (as typed and percent-decoded) replaced by `***`.
func redacted(_ text: String) -> String {
    guard let storePassword else { return text }
    var text = text
    for form in [storePassword, storePassword.removingPercentEncoding ?? storePassword] {
        text = text.replacingOccurrences(of: form, with: "***")
    }
    return text
}

/// The store URL without its password, for messages.
let shownStore = redacted(storeURL)

@MainActor func loadSchema() throws -> Schema {
    if let file = option("--schema", "MODELSTORE_SYNC_SCHEMA") {
        guard let data = FileManager.default.contents(atPath: file) else {
            throw SyncServerConfigurationError("the schema file '\(file)' cannot be read", remedy: "Check the path")
        }
        struct Wrapped: Decodable { var schema: Schema.Description }
        let decoder = JSONDecoder()
        guard
            let description = (try? decoder.decode(Schema.Description.self, from: data))
                ?? (try? decoder.decode(Wrapped.self, from: data))?.schema
        else {
            throw SyncServerConfigurationError(
                "the schema file '\(file)' is not a stored schema",
                remedy: "Write it with 'modelstore schema URL --json' from a store of the app")
        }
        return try Schema(description).includingSyncMetadata()
    }
    StoreRegistry.shared.registerBuiltInSchemes()
    let reference = try StoreReference(storeURL)
    guard reference.scheme.maintenance != nil else {
        throw SyncServerConfigurationError(
            "the store's schema is needed: '\(reference.scheme.name):' stores are opened by the app's schema",
            remedy: "Pass '--schema FILE', written by 'modelstore schema URL --json' from a store of the app")
    }
    return try Schema(reference.storedSchema(for: "serve")).includingSyncMetadata()
}

let notificationsSetting = option("--change-notifications", "MODELSTORE_SYNC_CHANGE_NOTIFICATIONS") ?? "on"
guard ["on", "off"].contains(notificationsSetting) else {
    fail("'--change-notifications' takes 'on' or 'off', not '\(notificationsSetting)'")
}
let packedSetting = option("--packed-changes", "MODELSTORE_SYNC_PACKED_CHANGES") ?? "on"
guard ["on", "off"].contains(packedSetting) else {
    fail("'--packed-changes' takes 'on' or 'off', not '\(packedSetting)'")
}
let groupCommitSetting = option("--group-commit", "MODELSTORE_SYNC_GROUP_COMMIT") ?? "on"
guard ["on", "off"].contains(groupCommitSetting) else {
    fail("'--group-commit' takes 'on' or 'off', not '\(groupCommitSetting)'")
}
/// The LISTEN/NOTIFY signal between processes of a PostgreSQL store, when on.
let changeSignal: PostgreSQLChangeSignal? =
    notificationsSetting == "on"
    ? (try? PostgreSQLStoreConfiguration(url: storeURL)).map {
        PostgreSQLChangeSignal(configuration: $0)
    } : nil

// The certificate is read before the store is opened: a wrong path touches nothing.
let tls: SyncServerTLS?
switch (option("--tls-certificate", "MODELSTORE_SYNC_TLS_CERTIFICATE"), option("--tls-key", "MODELSTORE_SYNC_TLS_KEY"))
{
case (nil, nil): tls = nil
case (let certificate?, let key?):
    do {
        tls = try SyncServerTLS.reading(certificateFile: certificate, keyFile: key)
    } catch {
        fail("\(error)")
    }
case (nil, _): fail("'--tls-key' needs '--tls-certificate FILE' (or MODELSTORE_SYNC_TLS_CERTIFICATE) beside it")
case (_, nil): fail("'--tls-certificate' needs '--tls-key FILE' (or MODELSTORE_SYNC_TLS_KEY) beside it")
}

let server: SyncServer
let scopeAttribute = option("--scope-attribute", "MODELSTORE_SYNC_SCOPE_ATTRIBUTE")
do {
    let schema = try loadSchema()
    let container = try ModelContainer(for: schema, url: storeURL)
    let scope = scopeAttribute.map { SyncScope.owner(attribute: $0, schema: schema) }
    var configuration = SyncServerConfiguration()
    configuration.maximumRequestBytes = number(
        "--max-request-bytes", nil, default: configuration.maximumRequestBytes, range: 1024...(1 << 30))
    let rate = number("--rate", nil, default: Int(configuration.requestsPerSecond), range: 1...1_000_000)
    configuration.requestsPerSecond = Double(rate)
    configuration.requestBurst = Double(rate * 2)
    let poll = number(
        "--poll-interval", "MODELSTORE_SYNC_POLL_INTERVAL", default: changeSignal == nil ? 100 : 1000,
        range: 10...3_600_000)
    configuration.changePollInterval = .milliseconds(poll)
    configuration.packedChanges = packedSetting == "on"
    configuration.groupCommit = groupCommitSetting == "on"
    server = SyncServer(
        host: try SyncHost(container: container, scope: scope), verifier: verifier, configuration: configuration,
        changeSignal: changeSignal)
} catch {
    fail(redacted("cannot serve '\(shownStore)': \(error)"))
}

let host = option("--host", "MODELSTORE_SYNC_HOST") ?? "127.0.0.1"
let port = number("--port", "MODELSTORE_SYNC_PORT", default: 8080, range: 0...65535)
let path = (option("--path") ?? "sync").trimmingCharacters(in: CharacterSet(charactersIn: "/"))
let scopeText =
    (scopeAttribute.map { "each client holds the models whose '\($0)' is its subject" } ?? "no scope")
    + (changeSignal.map { ", change notifications on '\($0.channel)'" } ?? "")
do {
    let scheme = tls == nil ? "http" : "https"
    try await server.run(host: host, port: port, path: path, tls: tls) {
        [verifier, shownStore, scopeText, host, path] bound in
        let line =
            "modelstore-sync-server: listening on \(scheme)://\(host):\(bound)/\(path) for '\(shownStore)' "
            + "(\(verifier.algorithm) tokens, \(scopeText))\n"
        FileHandle.standardOutput.write(Data(line.utf8))
    }
} catch {
    fail(redacted("\(error)"))
}
