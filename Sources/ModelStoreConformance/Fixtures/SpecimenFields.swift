import Foundation
import ModelStore

/// Compares specimens attribute by attribute, naming the attributes that differ.
struct SpecimenField: Sendable {
    let name: String
    let equal: @Sendable (Specimen, Specimen) -> Bool
    let render: @Sendable (Specimen) -> String

    static func field<Value: Equatable & Sendable>(
        _ name: String, _ keyPath: KeyPath<Specimen, Value> & Sendable
    ) -> SpecimenField {
        SpecimenField(
            name: name, equal: { $0[keyPath: keyPath] == $1[keyPath: keyPath] },
            render: { String(describing: $0[keyPath: keyPath]) })
    }

    /// Every stored attribute of ``Specimen``.
    static let all: [SpecimenField] = [
        field("code", \.code), field("series", \.series), field("serial", \.serial), field("isActive", \.isActive),
        field("count", \.count), field("tiny", \.tiny), field("small", \.small), field("medium", \.medium),
        field("large", \.large), field("unsigned", \.unsigned), field("byte", \.byte), field("word", \.word),
        field("doubleWord", \.doubleWord), field("quadWord", \.quadWord), field("weight", \.weight),
        field("ratio", \.ratio), field("price", \.price), field("title", \.title), field("createdAt", \.createdAt),
        field("payload", \.payload), field("token", \.token), field("homepage", \.homepage),
        field("nickname", \.nickname), field("rank", \.rank), field("reviewedAt", \.reviewedAt), field("tags", \.tags),
        field("measurements", \.measurements), field("labelsByNumber", \.labelsByNumber), field("kind", \.kind),
        field("grade", \.grade), field("origin", \.origin), field("attachment", \.attachment),
    ]

    /// Fails naming every attribute of `found` that differs from `expected`.
    static func check(
        _ found: Specimen, equals expected: Specimen, _ context: String, in environment: CaseEnvironment
    ) throws {
        let differing = all.filter { !$0.equal(found, expected) }
        guard let first = differing.first else { return }
        let names = differing.map { "'Specimen.\($0.name)'" }.joined(separator: ", ")
        throw environment.failure(
            "\(context): \(names) came back different from what was saved: every value type MUST round-trip exactly",
            expected: "\(first.name) = \(first.render(expected))", found: "\(first.name) = \(first.render(found))")
    }

    /// Compares every specimen of a fresh fetch with the seed, by code.
    static func checkAll(
        _ found: [Specimen], equal expected: [Specimen], _ context: String, in environment: CaseEnvironment
    ) throws {
        let byCode = Dictionary(found.map { ($0.code, $0) }, uniquingKeysWith: { first, _ in first })
        try environment.checkEqual(
            found.map(\.code).sorted(), expected.map(\.code).sorted(),
            "\(context): the set of specimens differs from the one saved")
        for specimen in expected {
            try check(
                try environment.require(byCode[specimen.code], "\(context): '\(specimen.code)' is missing"),
                equals: specimen, "\(context), specimen '\(specimen.code)'", in: environment)
        }
    }
}
