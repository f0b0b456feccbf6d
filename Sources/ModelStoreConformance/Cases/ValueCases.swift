import Foundation
import ModelStore

/// The value corpus (``ValueCorpus``), one case per family: every value stored, read back exactly
/// (across a reopen for a durable store), and run through every operator, membership list, sort and
/// count its type accepts, each compared with Swift's own evaluation of the same predicate and sort.
enum ValueCases {
    static let all: [CaseDefinition] = ValueCorpus.families.map { family in
        CaseDefinition(
            .values, family.name,
            "Every value of the corpus's \(family.summary) round-trips exactly (across a reopen when durable) and "
                + "goes through every operator, membership list, sort and count that accepts it as Swift evaluates it."
        ) { env in
            try check(family, env)
        }
    }

    static func check(_ family: ValueFamily, _ env: CaseEnvironment) throws {
        let expected = ValueCorpus.specimens(of: family)
        let durable = env.capabilities.contains(.durability)
        var container: ModelContainer? = try env.openContainer()
        try {
            let context = env.freshContext(try env.require(container, "the container is gone"))
            for specimen in ValueCorpus.specimens(of: family) { context.insert(specimen) }
            try env.step("saving the '\(family.name)' corpus (\(family.count) specimens)") { try context.save() }
        }()
        try checkStored(family, expected, in: try env.require(container, "the container is gone"), env, after: "saving")
        if durable {
            // The first container goes before the second opens: some stores have a single writer.
            env.releaseContexts()
            container = nil
            container = try env.openContainer()
            try checkStored(
                family, expected, in: try env.require(container, "the container is gone"), env, after: "reopening")
        }
        try checkQueries(family, expected, in: try env.require(container, "the container is gone"), env)
    }

    /// Every specimen read back in a fresh context holds exactly the values saved.
    static func checkStored(
        _ family: ValueFamily, _ expected: [Specimen], in container: ModelContainer, _ env: CaseEnvironment,
        after what: String
    ) throws {
        let context = env.freshContext(container)
        let found = try env.step("fetching the '\(family.name)' corpus after \(what)") {
            try context.fetch(FetchDescriptor<Specimen>())
        }
        let byCode = try env.index(found, by: \.code, "fetching the '\(family.name)' corpus after \(what)")
        try env.checkEqual(byCode.count, expected.count, "specimens of the '\(family.name)' corpus were lost")
        for specimen in expected {
            let stored = try env.require(byCode[specimen.code], "the specimen '\(specimen.code)' is missing")
            let differing = family.differences(stored, specimen)
            guard differing.isEmpty else {
                let index = specimen.serial
                throw env.failure(
                    "after \(what), the '\(family.name)' corpus's specimen \(index) did not round-trip exactly in "
                        + differing.map { "'\($0)'" }.joined(separator: ", ")
                        + " (normalized, truncated, rounded or its sign dropped)",
                    expected: describe(specimen, differing), found: describe(stored, differing))
            }
        }
    }

    /// Every predicate selects, counts and sorts what Swift's own evaluation gives on the saved values.
    static func checkQueries(
        _ family: ValueFamily, _ expected: [Specimen], in container: ModelContainer, _ env: CaseEnvironment
    ) throws {
        let context = env.freshContext(container)
        for (name, predicate) in family.predicates() {
            let truth = try expected.filter { try predicate.evaluate($0) }.map(\.code).sorted()
            let descriptor = FetchDescriptor<Specimen>(predicate: predicate)
            let found = try env.step("fetching '\(name)'") { try context.fetch(descriptor) }.map(\.code).sorted()
            try env.checkEqual(
                found, truth,
                "the predicate '\(name)' selected other models than Swift's own evaluation of it: not applied exactly")
            let count = try env.step("counting '\(name)'") { try context.fetchCount(descriptor) }
            try env.checkEqual(
                count, truth.count, "fetchCount of '\(name)' disagrees with Swift's evaluation: count disagrees")
        }
        for (name, predicate, sortBy) in family.sorts() {
            let complete = sortBy + [SortDescriptor(\Specimen.code, comparator: .lexical)]
            let kept = try predicate.map { predicate in try expected.filter { try predicate.evaluate($0) } } ?? expected
            let truth = sortedAsSwift(kept, by: complete).map(\.code)
            let descriptor = FetchDescriptor<Specimen>(predicate: predicate, sortBy: complete)
            let found = try env.step("fetching sorted by \(name)") { try context.fetch(descriptor) }.map(\.code)
            try env.checkEqual(found, truth, "the sort by \(name) is not Swift's order: wrong order")
        }
    }

    /// The named attributes of a specimen, as Swift shows them (scalars of strings spelled out).
    static func describe(_ specimen: Specimen, _ names: [String]) -> String {
        names.map { name in
            let value: Any =
                switch name {
                case "count": specimen.count
                case "large": specimen.large
                case "quadWord": specimen.quadWord
                case "unsigned": specimen.unsigned
                case "tiny": specimen.tiny
                case "small": specimen.small
                case "medium": specimen.medium
                case "byte": specimen.byte
                case "word": specimen.word
                case "doubleWord": specimen.doubleWord
                case "weight": "\(specimen.weight) (bits \(String(specimen.weight.bitPattern, radix: 16)))"
                case "ratio": "\(specimen.ratio) (bits \(String(specimen.ratio.bitPattern, radix: 16)))"
                case "price": specimen.price
                case "title": scalars(specimen.title)
                case "nickname": specimen.nickname.map(scalars) ?? "nil"
                case "createdAt": specimen.createdAt.timeIntervalSinceReferenceDate
                case "reviewedAt": specimen.reviewedAt.map { "\($0.timeIntervalSinceReferenceDate)" } ?? "nil"
                case "payload": "\(specimen.payload.count) bytes, hash \(specimen.payload.hashValue)"
                case "rank": specimen.rank.map { "\($0)" } ?? "nil"
                case "grade": specimen.grade.map { "\($0)" } ?? "nil"
                case "isActive": specimen.isActive
                case "token": specimen.token
                case "homepage": specimen.homepage.absoluteString
                case "kind": specimen.kind
                case "tags": specimen.tags.map(scalars)
                case "measurements":
                    specimen.measurements.map {
                        "\(scalars($0.key)): \($0.value) (bits \(String($0.value.bitPattern, radix: 16)))"
                    }
                    .sorted()
                case "labelsByNumber": specimen.labelsByNumber.map { "\($0.key): \(scalars($0.value))" }.sorted()
                case "origin":
                    "\(specimen.origin.latitude.bitPattern) \(specimen.origin.longitude.bitPattern) \(scalars(specimen.origin.label))"
                default: "?"
                }
            return "\(name): \(value)"
        }
        .joined(separator: "; ")
    }

    /// A string's scalars, `"e" U+0301`.
    static func scalars(_ text: String) -> String {
        "\""
            + text.unicodeScalars.map {
                $0.isASCII && $0.value >= 0x20 ? String($0) : "\\u{\(String($0.value, radix: 16))}"
            }.joined() + "\""
    }
}
