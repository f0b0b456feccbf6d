import Foundation
import ModelStore

/// Large `.externalStorage` attributes.
enum ExternalStorageCases {
    /// Deterministic bytes that no two sizes or seeds share.
    static func bytes(_ count: Int, seed: UInt8) -> Data {
        Data((0..<count).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ Int(seed) &+ ($0 >> 10)) })
    }

    static let all: [CaseDefinition] = [
        CaseDefinition(
            .externalStorage, "largeValuesRoundTrip",
            "A multi-megabyte external attribute round-trips, is replaced, and survives unrelated updates.",
            requires: .externalStorage
        ) { env in
            let big = bytes(3 << 20, seed: 1)
            let smaller = bytes(1 << 20, seed: 2)
            let durable = env.capabilities.contains(.durability)
            // Replaces the attachment, saves an unrelated change, and reads the smaller value back.
            func replace(in container: ModelContainer) throws {
                let context = env.freshContext(container)
                let specimen = try env.require(
                    try env.step("fetching the specimen") { try context.fetch(FetchDescriptor<Specimen>()).first },
                    "the specimen with the attachment is gone")
                specimen.attachment = smaller
                try env.step("replacing the attachment with 1 MiB") { try context.save() }
                specimen.title = "unrelated change"
                try env.step("saving an unrelated change") { try context.save() }
                let again = try env.all(Specimen.self, in: container, by: \.code)
                try env.check(
                    again.first?.attachment == smaller, "a replaced external attachment came back different",
                    expected: "\(smaller.count) bytes", found: "\(again.first?.attachment.count ?? 0) bytes")
            }
            try env.session { container in
                let context = env.freshContext(container)
                let specimen = Seed.makeSpecimen(0)
                specimen.attachment = big
                context.insert(specimen)
                try env.step("saving a specimen with a 3 MiB attachment") { try context.save() }
                let read = try env.all(Specimen.self, in: container, by: \.code)
                try env.check(
                    read.first?.attachment == big, "a 3 MiB external attachment came back different",
                    expected: "\(big.count) bytes", found: "\(read.first?.attachment.count ?? 0) bytes")
                if !durable { try replace(in: container) }
            }
            guard durable else { return }
            // The large value itself after reopening (every byte of it), then the replacement.
            try env.session { container in
                let reopened = try env.all(Specimen.self, in: container, by: \.code)
                try env.check(
                    reopened.first?.attachment == big,
                    "a 3 MiB external attachment came back different after reopening",
                    expected: "\(big.count) bytes", found: "\(reopened.first?.attachment.count ?? 0) bytes")
                try replace(in: container)
            }
            try env.session { container in
                let reopened = try env.all(Specimen.self, in: container, by: \.code)
                try env.check(
                    reopened.first?.attachment == smaller, "an external attachment came back different after reopening",
                    expected: "\(smaller.count) bytes", found: "\(reopened.first?.attachment.count ?? 0) bytes")
            }
        },
        CaseDefinition(
            .externalStorage, "deletedValuesAreGone",
            "Deleting a model with a large external attribute, then reopening, does not bring it back.",
            requires: [.externalStorage, .durability]
        ) { env in
            try env.session { container in
                let context = env.freshContext(container)
                let kept = Seed.makeSpecimen(0)
                kept.attachment = bytes(1 << 20, seed: 3)
                let dropped = Seed.makeSpecimen(1)
                dropped.attachment = bytes(1 << 20, seed: 4)
                context.insert(kept)
                context.insert(dropped)
                try env.step("saving two specimens with 1 MiB attachments") { try context.save() }
                context.delete(dropped)
                try env.step("deleting one of them") { try context.save() }
            }
            try env.session { container in
                let left = try env.all(Specimen.self, in: container, by: \.code)
                try env.checkEqual(
                    left.map(\.code), ["S01"],
                    "after deleting a specimen with an external attachment and reopening, "
                        + "the wrong specimens are stored")
                try env.check(
                    left.first?.attachment == bytes(1 << 20, seed: 3),
                    "the kept specimen's external attachment changed when another was deleted")
            }
        },
    ]
}
