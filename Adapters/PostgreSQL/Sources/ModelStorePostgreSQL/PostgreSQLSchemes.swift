import Foundation
import ModelStore
import ModelStoreTooling

extension StoreScheme {
    /// `postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE[?namespace=…&sslmode=…&statement_timeout=…]`:
    /// a ``PostgreSQLStore``; what the URL leaves out comes from the `PG*` variables.
    ///
    /// A unix socket is the host, percent-encoded (`postgres://me@%2Ftmp%2Fpg/db`), or the option
    /// `host=/tmp/pg`.
    public static let postgres = postgreSQLScheme(named: "postgres")

    /// `postgresql://…`: the same as ``postgres``.
    ///
    /// Both schemes carry ``PostgreSQLMaintenance``, which tools such as `modelstore` use.
    public static let postgresql = postgreSQLScheme(named: "postgresql")

    private static func postgreSQLScheme(named name: String) -> StoreScheme {
        StoreScheme(
            name, summary: "a PostgreSQL database, shared by many processes",
            location: .optional("USER@HOST:PORT/DATABASE"),
            options: [
                .init("namespace", summary: "the PostgreSQL schema the tables live in (default public)"),
                .init(
                    "sslmode", allowedValues: PostgreSQLStoreConfiguration.TLSMode.allCases.map(\.rawValue),
                    summary: "whether the connection uses TLS"),
                .init("sslrootcert", summary: "a PEM file of the CA certificates TLS trusts (default the system's)"),
                .init("statement_timeout", summary: "milliseconds a statement may run"),
                .init("max_connections", summary: "the size of the connection pool"),
                .init("host", summary: "the server's host, or the directory of its unix socket"),
                .init("port", summary: "the server's port"),
            ],
            example: "\(name)://app@127.0.0.1:5432/app"
        ) { url in
            try PostgreSQLStoreConfiguration(url: url.string)
        }
        .maintained(by: PostgreSQLMaintenance())
    }
}

extension StoreRegistry {
    /// Registers `postgres:` and `postgresql:`, keeping a scheme of the same name registered first.
    ///
    /// Linking `ModelStorePostgreSQL` does this when the program starts; call it yourself only if
    /// you unregistered the schemes.
    public func registerPostgreSQLSchemes() {
        register(.postgres, replacingExisting: false)
        register(.postgresql, replacingExisting: false)
    }
}

/// Called by the module's load hook (the `CModelStorePostgreSQLLoad` target) when the program
/// starts, so `MODELSTORE_URL=postgres://…` works in any program that links the module.
@_cdecl("modelstore_postgresql_register_schemes")
func registerSchemesAtLoad() {
    StoreRegistry.shared.registerPostgreSQLSchemes()
}
