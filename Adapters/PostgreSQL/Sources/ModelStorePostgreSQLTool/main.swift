import Foundation
import ModelStore
import ModelStoreCommandLine
import ModelStorePostgreSQL

// `modelstore-postgres`: `modelstore` with the PostgreSQL adapter linked: the main package's tool (see `Tool`), which
// reaches `postgres://` and `postgresql://` stores too, through `PostgreSQLMaintenance`.
StoreRegistry.shared.registerPostgreSQLSchemes()
exit(Tool.run(Array(CommandLine.arguments.dropFirst())))
