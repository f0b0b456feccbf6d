import Foundation
import ModelStore

/// The corpus's strings, dates, data and optionals.
extension ValueCorpus {
    // MARK: Strings

    /// Canonically equivalent spellings (precomposed, decomposed, combining marks in either order, the
    /// Angstrom sign), NUL and byte-order marks, and letters whose case folds oddly.
    static let texts: [String] = [
        "", "é", "e\u{301}", "É", "\u{C5}", "A\u{30A}", "\u{212B}", "a\u{301}\u{316}", "a\u{316}\u{301}", "\u{0}",
        "a\u{0}b", "a", "\u{FEFF}bom", "bom", "ß", "SS", "ss", "\u{130}", "i", "\u{131}", "I", "\u{FB01}", "fi", "Σ",
        "ς", "σ", "👨\u{200D}👩\u{200D}👧", "Z", "z", "\u{1E9B}\u{323}", "\u{17F}\u{323}\u{307}",
    ]

    static let strings = ValueFamily(
        name: "strings",
        summary: "strings Swift compares by canonical equivalence (precomposed and decomposed forms, combining marks "
            + "in either order), NUL, byte-order marks and letters whose case folds oddly",
        count: texts.count,
        fill: { specimen, index in specimen.title = texts[index] },
        differences: { found, expected in
            sameScalars(found.title, expected.title) ? [] : ["title"]
        },
        predicates: {
            ValueProbe.ordered(\Specimen.title, "title", texts)
                + ValueProbe.text(["", "e", "\u{301}", "é", "e\u{301}", "\u{0}", "\u{FEFF}", "s", "S", "i", "a"])
        },
        sorts: {
            [
                ("title (lexical)", nil, [SortDescriptor(\Specimen.title, comparator: .lexical)]),
                (
                    "title descending (lexical)", nil,
                    [SortDescriptor(\Specimen.title, comparator: .lexical, order: .reverse)]
                ),
                ("title (localized standard)", nil, [SortDescriptor(\Specimen.title)]),
            ]
        })

    /// The same string scalar for scalar: equal by `==` is not enough to round-trip.
    static func sameScalars(_ lhs: String?, _ rhs: String?) -> Bool {
        switch (lhs, rhs) {
        case (nil, nil): true
        case (let lhs?, let rhs?): lhs.unicodeScalars.elementsEqual(rhs.unicodeScalars)
        default: false
        }
    }

    // MARK: Dates

    /// Dates before 1970 and far from it, with parts below a microsecond.
    static let dateValues: [Date] = [
        Date(timeIntervalSince1970: -1.000_000_123), Date(timeIntervalSince1970: 0),
        Date(timeIntervalSinceReferenceDate: 0.000_000_123), Date(timeIntervalSinceReferenceDate: -62_135_769_600.25),
        Date(timeIntervalSinceReferenceDate: 100_000_000_000.5), .distantPast, .distantFuture,
        Date(timeIntervalSinceReferenceDate: 1_234_567.123_456_789), Date(timeIntervalSince1970: -0.000_000_5),
    ]
    static let optionalDates: [Date?] = [nil, .distantPast, Date(timeIntervalSinceReferenceDate: 0.000_000_123), nil]

    static let dates = ValueFamily(
        name: "dates",
        summary: "dates before 1970 and thousands of years away, with parts below a microsecond, and optional dates",
        count: dateValues.count,
        fill: { specimen, index in
            specimen.createdAt = dateValues[index]
            specimen.reviewedAt = cycle(optionalDates, index)
        },
        differences: { found, expected in
            var names: [String] = []
            if !sameBits(
                found.createdAt.timeIntervalSinceReferenceDate, expected.createdAt.timeIntervalSinceReferenceDate)
            {
                names.append("createdAt")
            }
            if found.reviewedAt?.timeIntervalSinceReferenceDate.bitPattern
                != expected.reviewedAt?.timeIntervalSinceReferenceDate.bitPattern
            {
                names.append("reviewedAt")
            }
            return names
        },
        predicates: {
            ValueProbe.ordered(\Specimen.createdAt, "createdAt", dateValues)
                + ValueProbe.equatable(\Specimen.reviewedAt, "reviewedAt", optionalDates)
        },
        sorts: {
            [
                ("createdAt", nil, [SortDescriptor(\Specimen.createdAt)]),
                ("reviewedAt descending, nil included", nil, [SortDescriptor(\Specimen.reviewedAt, order: .reverse)]),
            ]
        })

    // MARK: Data

    /// Empty, NUL bytes, a byte-order mark, every byte, and a mebibyte.
    static let payloads: [Data] = [
        Data(), Data([0]), Data([0, 0]), Data([0xEF, 0xBB, 0xBF]), Data((0...255).map { UInt8($0) }),
        Data((0..<(1 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 8) }), Data([0xFF]),
    ]

    static let data = ValueFamily(
        name: "data",
        summary: "empty Data, NUL bytes, every byte value and a mebibyte",
        count: payloads.count,
        fill: { specimen, index in specimen.payload = payloads[index] },
        differences: { found, expected in found.payload == expected.payload ? [] : ["payload"] },
        predicates: { ValueProbe.equatable(\Specimen.payload, "payload", payloads) },
        sorts: { [] })

    // MARK: Optionals

    static let nicknames: [String?] = [nil, "", "\u{0}", "é", "e\u{301}", nil, "a"]
    static let ranks: [Int?] = [nil, 0, .min, .max, -1, nil]
    static let grades: [SpecimenGrade?] = [nil, .low, .high]

    static let optionals = ValueFamily(
        name: "optionals",
        summary: "nil against empty, zero and NUL in optional strings, integers and enums, and membership lists "
            + "that hold nil",
        count: nicknames.count,
        fill: { specimen, index in
            specimen.nickname = nicknames[index]
            specimen.rank = cycle(ranks, index)
            specimen.grade = cycle(grades, index)
        },
        differences: { found, expected in
            var names: [String] = []
            if !sameScalars(found.nickname, expected.nickname) { names.append("nickname") }
            if found.rank != expected.rank { names.append("rank") }
            if found.grade != expected.grade { names.append("grade") }
            return names
        },
        predicates: {
            ValueProbe.equatable(\Specimen.nickname, "nickname", nicknames)
                + ValueProbe.equatable(\Specimen.rank, "rank", ranks)
                + [
                    ("[nil, \"\"].contains(nickname)", ValueProbe.member(\Specimen.nickname, of: [nil, ""])),
                    ("[nil, 0].contains(rank)", ValueProbe.member(\Specimen.rank, of: [nil, 0])),
                    ("[\"é\", nil].contains(nickname)", ValueProbe.member(\Specimen.nickname, of: ["é", nil])),
                    ("grade == nil", #Predicate<Specimen> { $0.grade == nil }),
                    ("grade != nil", #Predicate<Specimen> { $0.grade != nil }),
                ]
        },
        sorts: {
            [
                ("nickname (nil first)", nil, [SortDescriptor(\Specimen.nickname, comparator: .lexical)]),
                ("rank descending (nil last)", nil, [SortDescriptor(\Specimen.rank, order: .reverse)]),
            ]
        })
}
