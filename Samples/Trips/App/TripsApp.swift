import Foundation
import ModelStore
import ModelStoreAdapters

/// Runs one `trips` command line and returns the exit status: 0 on success, 1 when the command
/// fails, 2 when the command line is wrong.
///
/// The `trips` executable calls it; so does any program that links more stores first, such as
/// the PostgreSQL package's `trips-postgres`, whose module registers the `postgres:` scheme.
public enum TripsApp {
    /// Runs the command line `arguments` (without the program's name) and returns the exit status.
    public static func run(_ arguments: [String]) -> Int32 {
        let invocation: Invocation
        do {
            invocation = try Invocation.parse(arguments)
        } catch {
            printError("\(error)\nRun 'trips help' for usage.")
            return 2
        }
        StoreRegistry.shared.registerBuiltInSchemes()
        if case .help = invocation.command {
            print(Invocation.help)
            return 0
        }
        let (given, isFromEnvironment) = StoreRegistry.resolve(invocation.storeURL)
        let url = StoreURL.redactingPassword(in: given)  // shown to people: never a password
        let container: ModelContainer
        do {
            container = try ModelContainer(
                for: Trip.self, Item.self, Destination.self, url: invocation.storeURL,
                environmentOverride: StoreRegistry.environmentVariable)
        } catch let error as DataStoreError where error.code == .invalidConfiguration {
            printError(sentences(error))
            return 1
        } catch {
            let source = isFromEnvironment ? " (from \(StoreRegistry.environmentVariable))" : ""
            printError("cannot open the store '\(url)'\(source): \(error)")
            return 1
        }
        do {
            let planner = TripPlanner(container: container)
            switch invocation.command {
            case .overview:
                let added = try planner.addDemoTripsIfEmpty()
                print(added ? "Added demo trips to \(url)." : "Trips in \(url):")
                print(try planner.list(TripQuery()))
            case .list(let query): print(try planner.list(query))
            case .add(let trip): print(try planner.add(trip))
            case .pack(let trip, let item, let quantity):
                print(try planner.pack(trip: trip, item: item, quantity: quantity))
            case .complete(let name): print(try planner.complete(name))
            case .rename(let old, let new): print(try planner.rename(from: old, to: new))
            case .delete(let name): print(try planner.delete(name))
            case .stats: print(try planner.stats())
            case .watch(let seconds, let changes):
                MainActor.assumeIsolated { TripWatch.run(container, seconds: seconds, changes: changes) }
            case .help: break
            }
            return 0
        } catch {
            printError("\(error)")
            return 1
        }
    }

    /// A configuration error as plain sentences, without its code.
    private static func sentences(_ error: DataStoreError) -> String {
        [error.message, error.remedy].compactMap { $0 }.joined(separator: ".\n") + "."
    }

    private static func printError(_ message: String) {
        FileHandle.standardError.write(Data("trips: \(message)\n".utf8))
    }
}
