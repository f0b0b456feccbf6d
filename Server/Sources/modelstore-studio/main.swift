import Foundation
import ModelStore
import ModelStorePostgreSQL
import ModelStoreStudio

/// `modelstore-studio URL [--host H] [--port N] [--write]`: serves ModelStore Studio for the store at URL.
let usage = """
    usage: modelstore-studio URL [--host HOST] [--port N] [--write]

    Serves a browser for the store at URL (sqlite:PATH, json:PATH, log:DIR,
    postgres://…), read through the schema it recorded, on HOST (default
    127.0.0.1) and port N (default 8642; 0 picks a free one). Open the address
    it prints: it carries a random access token. Read-only unless --write, which
    allows editing attributes and deleting models, recorded in history with the
    author 'studio'.
    """

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("modelstore-studio: \(message)\n".utf8))
    exit(2)
}

var arguments = Array(CommandLine.arguments.dropFirst())
var url: String?
var host = "127.0.0.1"
var port = 8642
var allowsWrites = false
while !arguments.isEmpty {
    let argument = arguments.removeFirst()
    switch argument {
    case "--help", "-h":
        print(usage)
        exit(0)
    case "--write": allowsWrites = true
    case "--host":
        guard !arguments.isEmpty else { fail("'--host' needs a value, such as '--host 127.0.0.1'") }
        host = arguments.removeFirst()
    case "--port":
        guard let value = arguments.first.flatMap(Int.init), (0...65535).contains(value) else {
            fail("'--port' needs a port number from 0 to 65535, such as '--port 8642'")
        }
        arguments.removeFirst()
        port = value
    default:
        guard !argument.hasPrefix("--") else { fail("unknown option '\(argument)'\n\n\(usage)") }
        guard url == nil else { fail("one store URL only; '\(url!)' and '\(argument)' were given") }
        url = argument
    }
}
guard let url else { fail("name the store to browse\n\n\(usage)") }

StoreRegistry.shared.registerPostgreSQLSchemes()
let store: StudioStore
do {
    store = try StudioStore(url: url)
} catch {
    fail("\(error)")
}
let studio = Studio(store: store, allowsWrites: allowsWrites)
let banner = "ModelStore Studio for '\(store.url)' (\(allowsWrites ? "read-write" : "read-only")) at"
do {
    try await studio.run(host: host, port: port) { address in
        FileHandle.standardOutput.write(Data("\(banner) \(address)\n".utf8))
    }
} catch {
    fail("\(error)")
}
store.close()
