import Foundation
import TripsSample

// `trips`: a small trip planner on ModelStore. The logic lives in TripsApp; this file only runs it.
exit(TripsApp.run(Array(CommandLine.arguments.dropFirst())))
