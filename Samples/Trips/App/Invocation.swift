import Foundation
import ModelStore

/// What the user asked `trips` to do, parsed from the command line.
struct Invocation {
    /// The store to open: `--store URL`, else ``defaultStoreURL``. `MODELSTORE_URL` overrides both.
    var storeURL: String
    var command: Command

    static let defaultStoreURL = "json:trips.json"

    enum Command {
        /// No command: add the demo trips to an empty store, then list.
        case overview
        case list(TripQuery)
        case add(NewTrip)
        case pack(trip: String, item: String, quantity: Int)
        case complete(String)
        case rename(from: String, to: String)
        case delete(String)
        case stats
        /// Keep listing the trips as they change, also by other processes, for this many seconds
        /// or until this many changes were listed.
        case watch(seconds: Double, changes: Int?)
        case help
    }

    /// The values of `trips add`.
    struct NewTrip {
        var name: String
        var city: String?
        var start: Date
        var budget: Double
        var items: [String]
    }

    static func parse(_ arguments: [String]) throws -> Invocation {
        var global = ArgumentReader(arguments, command: "trips")
        let storeURL = try global.option("--store") ?? defaultStoreURL
        if try global.flag("--help") || global.flag("-h") { return Invocation(storeURL: storeURL, command: .help) }
        let arguments = global.remaining
        guard let name = arguments.first else { return Invocation(storeURL: storeURL, command: .overview) }
        guard !name.hasPrefix("-") else { throw UsageError("'trips' has no option '\(name)'") }
        var reader = ArgumentReader(Array(arguments.dropFirst()), command: name)
        let command: Command
        switch name {
        case "list":
            command = .list(try TripQuery(&reader))
        case "add":
            let city = try reader.option("--to")
            let start = try reader.option("--start", expecting: "a date like 2025-06-01", TripFormat.parseDate)
            let budget = try reader.option("--budget", expecting: "an amount like 1200", parseAmount)
            let items = try reader.options("--item")
            let name = try tripName(reader.finish(positionals: ["name"])[0])
            command = .add(NewTrip(name: name, city: city, start: start ?? Date(), budget: budget ?? 0, items: items))
        case "pack":
            let quantity = try reader.option("--quantity", expecting: "a whole number from 1") { text in
                Int(text).flatMap { $0 >= 1 ? $0 : nil }
            }
            let names = try reader.finish(positionals: ["trip", "item"])
            command = .pack(trip: names[0], item: names[1], quantity: quantity ?? 1)
        case "complete":
            command = .complete(try reader.finish(positionals: ["name"])[0])
        case "rename":
            let names = try reader.finish(positionals: ["old name", "new name"])
            command = .rename(from: names[0], to: try tripName(names[1]))
        case "delete":
            command = .delete(try reader.finish(positionals: ["name"])[0])
        case "stats":
            _ = try reader.finish()
            command = .stats
        case "watch":
            let seconds = try reader.option("--seconds", expecting: "a number of seconds from 1 to 3600") { text in
                Double(text).flatMap { (1...3_600).contains($0) ? $0 : nil }
            }
            let changes = try reader.option("--changes", expecting: "a whole number from 1") { text in
                Int(text).flatMap { $0 >= 1 ? $0 : nil }
            }
            _ = try reader.finish()
            command = .watch(seconds: seconds ?? 60, changes: changes)
        case "help":
            command = .help
        default:
            throw UsageError("unknown command '\(name)'")
        }
        return Invocation(storeURL: storeURL, command: command)
    }

    /// A non-negative, finite amount.
    static func parseAmount(_ text: String) -> Double? {
        guard let value = Double(text), value.isFinite, value >= 0 else { return nil }
        return value
    }

    private static func tripName(_ name: String) throws -> String {
        let trimmed = name.trimmingCharacters(in: .whitespaces)
        guard !trimmed.isEmpty else { throw UsageError("a trip needs a name that is not blank") }
        return trimmed
    }

    /// The help text, listing the store schemes that are registered.
    ///
    /// A scheme's summary starts in the column of the commands' descriptions, on the line of its
    /// URL when the URL leaves room, else on the next line.
    static var help: String {
        let column = 30
        let schemes = StoreRegistry.shared.schemes.map { scheme in
            let url = "  " + scheme.usage
            let pad = String(repeating: " ", count: max(column - url.count, 0))
            return url.count + 2 <= column
                ? url + pad + scheme.summary
                : url + "\n" + String(repeating: " ", count: column) + scheme.summary
        }
        return """
            trips: a small trip planner on ModelStore.

            Usage: trips [--store URL] [COMMAND]

            With no command, trips opens the store (creating it if needed), adds a few
            demo trips when it is empty, and lists the trips.

            Commands:
              list [--city CITY] [--open | --done] [--search TEXT]
                   [--min-budget N] [--max-budget N] [--sort name|start|budget]
                   [--limit N] [--explain]
                                          list trips, filtered and sorted (or how the
                                          store runs it); --search ignores case and
                                          accents
              add NAME [--to CITY] [--start YYYY-MM-DD] [--budget N] [--item TITLE]...
                                          plan a trip
              pack TRIP ITEM [--quantity N]
                                          add something to pack to a trip
              complete NAME               mark a trip as done
              rename OLD NEW              rename a trip (names are unique)
              delete NAME                 delete a trip and its items (its destination
                                          stays)
              stats                       counts, budgets and the next trip
              watch [--seconds N] [--changes N]
                                          list the trips again each time they change,
                                          also when another process changes them (for
                                          N seconds, 60 by default, or until N changes
                                          were listed)
              help                        show this help

            Stores (--store URL; default \(defaultStoreURL)):
            \(schemes.joined(separator: "\n"))

            The environment variable \(StoreRegistry.environmentVariable), when set, overrides --store.
            """
    }
}
