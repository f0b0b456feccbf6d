import Foundation
import ModelStore
import ModelStoreInMemory
import Testing

/// `MODELSTORE_URL` replaces a URL only where the app asks for it: issue 12, item 12.
struct StoreURLOverrideTests {
    private func registry() -> StoreRegistry {
        let registry = StoreRegistry()
        registry.register(
            StoreScheme("memory", summary: "in memory", location: .optional("NAME"), example: "memory:") {
                InMemoryStoreConfiguration(name: $0.location.isEmpty ? "memory" : $0.location)
            })
        return registry
    }

    @Test func aURLIsOpenedAsGivenUnlessTheAppNamesAnOverride() throws {
        let environment = ["MODELSTORE_URL": "memory:override"]
        let plain = try registry().configuration(for: "memory:a", overriddenBy: nil, environment: environment)
        #expect(plain.name == "a")
        let other = try registry().configuration(for: "memory:b", overriddenBy: nil, environment: environment)
        #expect(other.name == "b")
        let overridden = try registry().configuration(
            for: "memory:a", overriddenBy: StoreRegistry.environmentVariable, environment: environment)
        #expect(overridden.name == "override")
        let ownVariable = try registry().configuration(
            for: "memory:a", overriddenBy: "PLANNER_STORE", environment: ["PLANNER_STORE": "memory:planner"])
        #expect(ownVariable.name == "planner")
    }

    @Test func twoContainersWithDifferentURLsAreTwoStores() throws {
        let registry = registry()
        let first = try ModelContainer(for: Pet.self, url: "memory:first", registry: registry)
        let second = try ModelContainer(for: Pet.self, url: "memory:second", registry: registry)
        #expect(first.configurations.map(\.name) == ["first"])
        #expect(second.configurations.map(\.name) == ["second"])
    }
}
