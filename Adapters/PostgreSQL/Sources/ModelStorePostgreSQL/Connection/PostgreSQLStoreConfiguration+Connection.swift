import PostgresNIO

extension PostgreSQLStoreConfiguration {
    /// Opens a connection of the caller's own to the store's server, outside the store's pool, with
    /// the configuration's credentials and TLS settings: for what a store does not do itself, such
    /// as `LISTEN` for notifications. The caller closes it.
    ///
    /// Throws a `DataStoreError` naming the cause, without the password, when the server cannot be
    /// reached or refuses the credentials.
    public func openConnection() async throws -> PostgresConnection {
        try await Database.connect(self)
    }
}
