import ModelStore
import ModelStoreInMemory

extension StoreScheme {
    /// `memory:` or `memory:NAME`: an `InMemoryStore` that forgets everything when the container goes away.
    public static let memory = StoreScheme(
        "memory", summary: "in memory, nothing saved to disk", location: .optional("NAME"), example: "memory:"
    ) { url in
        InMemoryStoreConfiguration(name: url.location.isEmpty ? "memory" : url.location)
    }

    /// The schemes of the adapters that ship with ModelStore.
    public static var builtIn: [StoreScheme] { [.memory] }
}

extension StoreRegistry {
    /// Registers the built-in schemes (`memory:`, `json:`, `log:`), keeping any scheme of the same
    /// name the app registered first. Calling it again does nothing.
    public func registerBuiltInSchemes() {
        for scheme in StoreScheme.builtIn { register(scheme, replacingExisting: false) }
    }
}
