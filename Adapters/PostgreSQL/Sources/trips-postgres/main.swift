import Foundation
import ModelStorePostgreSQL
import TripsSample

// `trips-postgres`: the Trips sample, linked with the PostgreSQL adapter so that `postgres:` URLs
// open (the module registers its schemes when the program starts). For example:
//   MODELSTORE_URL=postgres://user@localhost:5432/trips swift run --package-path Adapters/PostgreSQL trips-postgres
exit(TripsApp.run(Array(CommandLine.arguments.dropFirst())))
