import Foundation
import ModelStore

/// `trips watch`: a live list of the trips. A ``LiveQuery`` on the main context refetches after
/// every change, the container's watch brings in other processes' saves, and each new result is
/// printed as a table.
@MainActor
enum TripWatch {
    /// Lists the trips, then again after each change, for `seconds` or until `changes` changes
    /// were listed.
    static func run(_ container: ModelContainer, seconds: Double, changes: Int? = nil) {
        let watch = container.watchExternalChanges(every: .milliseconds(200))
        defer { watch.cancel() }
        let trips = LiveQuery(
            FetchDescriptor<Trip>(sortBy: [SortDescriptor(\.start), SortDescriptor(\.name)]), in: container.mainContext)
        var shown = 0
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline, shown <= (changes ?? .max) {
            if trips.fetchCount != shown {
                shown = trips.fetchCount
                let title = shown == 1 ? "Watching the trips (Ctrl-C to stop):" : "Changed:"
                // Written straight away, so a pipe sees each table as it comes.
                FileHandle.standardOutput.write(Data((title + "\n" + TripPlanner.table(of: trips.results) + "\n").utf8))
            }
            // Runs the main actor's work: the query's refetches and the main context's merges.
            _ = RunLoop.main.run(mode: .default, before: Date().addingTimeInterval(0.05))
        }
    }
}
