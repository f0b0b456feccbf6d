import Foundation
import ModelStore

/// `erase()`: everything goes, and the store stays usable.
enum EraseCases {
    static let all: [CaseDefinition] = [
        CaseDefinition(.erase, "eraseRemovesEverything", "After erase(), no entity has any model.", requires: .erase) {
            env in
            let container = try env.openContainer()
            try env.seed(container)
            try env.step("erasing the container") { try container.erase() }
            var counts: [String: Int] = [:]
            for type in Fixtures.types {
                func count<T: PersistentModel>(_ type: T.Type) throws -> Int { try env.count(T.self, in: container) }
                counts[Schema.entityName(for: type)] = try count(type)
            }
            try env.check(
                counts.values.allSatisfy { $0 == 0 }, "after erase(), models are still fetched: erase incomplete",
                expected: "no models", found: "\(counts.filter { $0.value > 0 }.sorted { $0.key < $1.key })")
            let stored = try StoredState.read(container, env).counts.filter { $0.value > 0 }
            try env.check(
                stored.isEmpty, "after erase(), the store still keeps models: erase incomplete",
                expected: "no models", found: "\(stored.sorted { $0.key < $1.key })")
        },
        CaseDefinition(
            .erase, "storeUsableAfterErase",
            "After erase(), the same unique values can be saved again and fetched.", requires: .erase
        ) { env in
            let container = try env.openContainer()
            try env.seed(container)
            try env.step("erasing the container") { try container.erase() }
            let seed = try env.seed(container)
            let specimens = try env.all(Specimen.self, in: container, by: \.code)
            try SpecimenField.checkAll(specimens, equal: seed.specimens, "the seed saved again after erase()", in: env)
        },
        CaseDefinition(
            .erase, "eraseIsDurable", "After erase() and reopening, the store is still empty.",
            requires: [.erase, .durability]
        ) { env in
            try env.session { container in
                try env.seed(container)
                try env.step("erasing the container") { try container.erase() }
            }
            try env.session { container in
                let left = try StoredState.read(container, env).counts.filter { $0.value > 0 }
                try env.check(
                    left.isEmpty, "after erase() and reopening, models are back: erase not durable",
                    expected: "no models", found: "\(left.sorted { $0.key < $1.key })")
                let context = env.freshContext(container)
                context.insert(Seed.makeSpecimen(0))
                try env.step("saving after erase() and reopening") { try context.save() }
            }
        },
    ]
}
