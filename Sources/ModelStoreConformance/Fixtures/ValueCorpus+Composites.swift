import Foundation
import ModelStore

/// The corpus's other attribute types: `Bool`, `UUID`, `URL`, enums, arrays, dictionaries and a
/// `Codable` struct.
extension ValueCorpus {
    static let bools = [true, false]
    static let tokens: [UUID] = [
        UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)),
        UUID(uuid: (255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255)),
        UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!,
    ]
    /// URLs whose text a store must keep as written: percent-encoding, Unicode, a fragment, a file URL.
    static let homepages: [URL] = [
        URL(string: "https://example.com/")!, URL(string: "https://example.com/a%20b?q=%C3%A9#frag")!,
        URL(string: "https://xn--e1afmkfd.example/%F0%9F%91%8D")!, URL(fileURLWithPath: "/tmp/ä ö/file.txt"),
        URL(string: "HTTPS://EXAMPLE.COM/")!,
    ]
    static let tagLists: [[String]] = [[], [""], ["a", "a"], ["\u{0}", "e\u{301}", "é"], ["b", "a"]]
    static let measurementMaps: [[String: Double]] = [[:], ["": -0.0], ["e\u{301}": 1, "E": 2], ["x": .infinity]]
    static let labelMaps: [[Int: String]] = [[:], [Int.min: "", Int.max: "\u{FEFF}"], [0: "zero"]]
    static let origins: [SpecimenOrigin] = [
        SpecimenOrigin(latitude: -0.0, longitude: .greatestFiniteMagnitude, label: ""),
        SpecimenOrigin(latitude: 90, longitude: -180, label: "e\u{301}"),
        SpecimenOrigin(latitude: .leastNonzeroMagnitude, longitude: 0, label: "\u{0}"),
    ]

    static let composites = ValueFamily(
        name: "composites",
        summary: "Bool, UUID (all zeros, all ones), URLs with percent-encoding, Unicode and case, enums, arrays with "
            + "empty and repeated elements, dictionaries with equivalent keys and signed zeros, and a Codable struct",
        count: 6,
        fill: { specimen, index in
            specimen.isActive = cycle(bools, index)
            specimen.token = cycle(tokens, index)
            specimen.homepage = cycle(homepages, index)
            specimen.kind = cycle(SpecimenKind.allCases, index)
            specimen.tags = cycle(tagLists, index)
            specimen.measurements = cycle(measurementMaps, index)
            specimen.labelsByNumber = cycle(labelMaps, index)
            specimen.origin = cycle(origins, index)
        },
        differences: { found, expected in
            var names: [String] = []
            if found.isActive != expected.isActive { names.append("isActive") }
            if found.token != expected.token { names.append("token") }
            if found.homepage.absoluteString != expected.homepage.absoluteString { names.append("homepage") }
            if found.kind != expected.kind { names.append("kind") }
            if !found.tags.elementsEqual(expected.tags, by: sameScalars) { names.append("tags") }
            if !sameMeasurements(found.measurements, expected.measurements) { names.append("measurements") }
            if found.labelsByNumber.count != expected.labelsByNumber.count
                || !found.labelsByNumber.allSatisfy({ sameScalars($0.value, expected.labelsByNumber[$0.key]) })
            {
                names.append("labelsByNumber")
            }
            if !sameBits(found.origin.latitude, expected.origin.latitude)
                || !sameBits(found.origin.longitude, expected.origin.longitude)
                || !sameScalars(found.origin.label, expected.origin.label)
            {
                names.append("origin")
            }
            return names
        },
        predicates: {
            ValueProbe.equatable(\Specimen.isActive, "isActive", bools)
                + ValueProbe.equatable(\Specimen.token, "token", tokens)
                + ValueProbe.equatable(\Specimen.homepage, "homepage", homepages)
                + ValueProbe.equatable(\Specimen.kind, "kind", SpecimenKind.allCases)
                + ["", "a", "é", "\u{0}"].map { tag in
                    ("tags.contains(\(String(reflecting: tag)))", #Predicate<Specimen> { $0.tags.contains(tag) })
                }
        },
        sorts: {
            [
                ("token", nil, [SortDescriptor(\Specimen.token)]),
                ("kind's raw value", nil, [SortDescriptor(\Specimen.kind.rawValue, comparator: .lexical)]),
            ]
        })

    /// The same keys, scalar for scalar, with the same values bit for bit.
    static func sameMeasurements(_ lhs: [String: Double], _ rhs: [String: Double]) -> Bool {
        let left = lhs.sorted {
            Array($0.key.unicodeScalars.map(\.value)).lexicographicallyPrecedes($1.key.unicodeScalars.map(\.value))
        }
        let right = rhs.sorted {
            Array($0.key.unicodeScalars.map(\.value)).lexicographicallyPrecedes($1.key.unicodeScalars.map(\.value))
        }
        return left.count == right.count
            && zip(left, right).allSatisfy { sameScalars($0.key, $1.key) && sameBits($0.value, $1.value) }
    }
}
