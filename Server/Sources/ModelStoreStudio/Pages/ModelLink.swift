import ModelStore

/// The studio's addresses of models: `/entities/Trip/models/i42` for the integer key 42,
/// `/entities/Trip/models/s<key>` for a string key.
enum ModelLink {
    /// The address of a model's page.
    static func path(_ id: PersistentIdentifier) -> String {
        "/entities/\(HTML.component(id.entityName))/models/\(HTML.component(key(id)))"
    }

    /// A model's key as it appears in its address.
    static func key(_ id: PersistentIdentifier) -> String {
        switch id.primaryKey {
        case .int(let value): "i\(value)"
        case .string(let value): "s\(value)"
        }
    }

    /// A link to a model's page, showing its entity and key.
    static func anchor(_ id: PersistentIdentifier, showsEntity: Bool = true) -> String {
        let label = showsEntity ? "\(id.entityName) \(id.primaryKey)" : "\(id.primaryKey)"
        return "<a href=\"\(path(id))\">\(HTML.escape(label))</a>"
    }

    /// The identifier an address names in a store; throws ``StudioError/Kind/badRequest`` for a malformed key.
    static func identifier(entity: String, key: String, storeIdentifier: String) throws -> PersistentIdentifier {
        if key.first == "i", let value = Int64(key.dropFirst()) {
            return .identifier(for: storeIdentifier, entityName: entity, primaryKey: value)
        }
        if key.first == "s" {
            return .identifier(for: storeIdentifier, entityName: entity, primaryKey: String(key.dropFirst()))
        }
        throw StudioError(
            .badRequest, "'\(key)' is not a model key", remedy: "Keys are 'i' and an integer, or 's' and a string")
    }
}
