import Foundation
import TripsMacroSample

// `trips-macro`: the `trips` sample with its models in SwiftData's spelling. The logic is the sample's.
exit(TripsApp.run(Array(CommandLine.arguments.dropFirst())))
