import Foundation
import ModelStore

/// One family of the value corpus: specimens whose attributes of one kind hold the values where stores
/// go wrong, the predicates and sorts that accept them, and how to tell two values apart exactly.
struct ValueFamily: Sendable {
    /// The family's name, which is also its case's name in the `values` group.
    let name: String
    /// What the family holds, for the case's summary.
    let summary: String
    /// How many specimens the family stores.
    let count: Int
    /// Sets the family's values of specimen `index` (its code, series and serial are set by the caller).
    let fill: @Sendable (Specimen, Int) -> Void
    /// The attributes of two specimens whose values differ as stored (bit for bit, scalar for scalar).
    let differences: @Sendable (Specimen, Specimen) -> [String]
    /// The predicates to run, by name: each must select exactly what Swift's own evaluation selects.
    let predicates: @Sendable () -> [(name: String, predicate: Predicate<Specimen>)]
    /// The sorts to run, each with a predicate that keeps only values Swift orders (no NaN).
    let sorts: @Sendable () -> [(name: String, predicate: Predicate<Specimen>?, sortBy: [SortDescriptor<Specimen>])]
}

/// The corpus: one family per kind of attribute.
enum ValueCorpus {
    static let families: [ValueFamily] = [
        integers, floatingPoint, decimalFamily, strings, dates, data, optionals, composites,
    ]

    /// The specimens of a family, as Swift holds them: the ground truth of every check.
    static func specimens(of family: ValueFamily) -> [Specimen] {
        (0..<family.count).map { index in
            let specimen = Specimen()
            specimen.code = "\(family.name)-\(index)"
            specimen.series = family.name
            specimen.serial = index
            family.fill(specimen, index)
            return specimen
        }
    }

    /// `values[index]`, cycling, so that attributes with fewer values repeat them (ties and duplicates).
    static func cycle<Value>(_ values: [Value], _ index: Int) -> Value { values[index % values.count] }

    // MARK: Integers

    static let ints: [Int] = [
        .min, .max, 0, -1, 1 << 53, (1 << 53) + 1, -(1 << 53) - 1, .max - 1, 9_007_199_254_740_993 * 3, 42,
    ]
    static let int64s: [Int64] = [.min, .max, (1 << 53) + 1, -(1 << 53) - 1, 0, -1, .min + 1]
    static let uint64s: [UInt64] = [.max, UInt64(Int64.max) + 1, UInt64(Int64.max), 0, 1, .max - 1, (1 << 53) + 1]
    static let uints: [UInt] = [.max, UInt(Int.max) + 1, 0, 7]
    static let int8s: [Int8] = [.min, .max, 0, -1, 1]
    static let int16s: [Int16] = [.min, .max, 0, -1, 255, -256]
    static let int32s: [Int32] = [.min, .max, 0, -1, 65_536]
    static let uint8s: [UInt8] = [.max, 0, 128, 127]
    static let uint16s: [UInt16] = [.max, 0, 32_768]
    static let uint32s: [UInt32] = [.max, 0, UInt32(Int32.max) + 1]

    static let integers = ValueFamily(
        name: "integers",
        summary: "every integer width at its extremes, integers beyond 2^53 (which a Double cannot hold) and "
            + "unsigned values beyond Int64.max",
        count: 10,
        fill: { specimen, index in
            specimen.count = cycle(ints, index)
            specimen.large = cycle(int64s, index)
            specimen.quadWord = cycle(uint64s, index)
            specimen.unsigned = cycle(uints, index)
            specimen.tiny = cycle(int8s, index)
            specimen.small = cycle(int16s, index)
            specimen.medium = cycle(int32s, index)
            specimen.byte = cycle(uint8s, index)
            specimen.word = cycle(uint16s, index)
            specimen.doubleWord = cycle(uint32s, index)
        },
        differences: { found, expected in
            var names: [String] = []
            if found.count != expected.count { names.append("count") }
            if found.large != expected.large { names.append("large") }
            if found.quadWord != expected.quadWord { names.append("quadWord") }
            if found.unsigned != expected.unsigned { names.append("unsigned") }
            if found.tiny != expected.tiny { names.append("tiny") }
            if found.small != expected.small { names.append("small") }
            if found.medium != expected.medium { names.append("medium") }
            if found.byte != expected.byte { names.append("byte") }
            if found.word != expected.word { names.append("word") }
            if found.doubleWord != expected.doubleWord { names.append("doubleWord") }
            return names
        },
        predicates: {
            ValueProbe.ordered(\Specimen.count, "count", ints) + ValueProbe.ordered(\Specimen.large, "large", int64s)
                + ValueProbe.ordered(\Specimen.quadWord, "quadWord", uint64s)
                + ValueProbe.ordered(\Specimen.unsigned, "unsigned", uints)
                // The narrow widths are compared with their two extremes, which is where they go wrong.
                + ValueProbe.ordered(\Specimen.tiny, "tiny", int8s, pivots: 2)
                + ValueProbe.ordered(\Specimen.small, "small", int16s, pivots: 2)
                + ValueProbe.ordered(\Specimen.medium, "medium", int32s, pivots: 2)
                + ValueProbe.ordered(\Specimen.byte, "byte", uint8s, pivots: 2)
                + ValueProbe.ordered(\Specimen.word, "word", uint16s, pivots: 2)
                + ValueProbe.ordered(\Specimen.doubleWord, "doubleWord", uint32s, pivots: 2)
        },
        sorts: {
            [
                ("count", nil, [SortDescriptor(\Specimen.count)]),
                ("large descending", nil, [SortDescriptor(\Specimen.large, order: .reverse)]),
                ("quadWord", nil, [SortDescriptor(\Specimen.quadWord)]),
                ("unsigned descending", nil, [SortDescriptor(\Specimen.unsigned, order: .reverse)]),
                ("tiny, then small", nil, [SortDescriptor(\Specimen.tiny), SortDescriptor(\Specimen.small)]),
                ("doubleWord", nil, [SortDescriptor(\Specimen.doubleWord)]),
            ]
        })

    // MARK: Floating point

    static let doubles: [Double] = [
        -0.0, 0.0, .nan, .infinity, -.infinity, .leastNonzeroMagnitude, -.leastNonzeroMagnitude, .leastNormalMagnitude,
        .greatestFiniteMagnitude, -.greatestFiniteMagnitude, 0.1, 9_007_199_254_740_994, 0x1p-1030, -2.5,
    ]
    static let floats: [Float] = [
        -0.0, .nan, .infinity, -.infinity, .leastNonzeroMagnitude, .greatestFiniteMagnitude, 0.1, 0.0, -1.5,
    ]

    static let floatingPoint = ValueFamily(
        name: "floatingPoint",
        summary: "Double and Float: signed zeros, NaN, infinities, subnormals, the largest finite values and values "
            + "no decimal text holds exactly",
        count: doubles.count,
        fill: { specimen, index in
            specimen.weight = cycle(doubles, index)
            specimen.ratio = cycle(floats, index)
        },
        differences: { found, expected in
            var names: [String] = []
            if !sameBits(found.weight, expected.weight) { names.append("weight") }
            if !sameBits(found.ratio, expected.ratio) { names.append("ratio") }
            return names
        },
        predicates: {
            ValueProbe.ordered(\Specimen.weight, "weight", doubles)
                + ValueProbe.ordered(\Specimen.ratio, "ratio", floats)
                + [("weight == weight (false for NaN only)", ValueProbe.selfEqual(\Specimen.weight))]
        },
        sorts: {
            [
                ("weight (NaN left out)", ValueProbe.selfEqual(\Specimen.weight), [SortDescriptor(\Specimen.weight)]),
                (
                    "ratio descending (NaN left out)", ValueProbe.selfEqual(\Specimen.ratio),
                    [SortDescriptor(\Specimen.ratio, order: .reverse)]
                ),
            ]
        })

    /// The same value bit for bit, or both NaN (a NaN's payload is not part of its value).
    static func sameBits<F: BinaryFloatingPoint>(_ lhs: F, _ rhs: F) -> Bool {
        (lhs.isNaN && rhs.isNaN) || (lhs == rhs && lhs.sign == rhs.sign)
    }

    // MARK: Decimals

    static let decimals: [Decimal] = [
        .greatestFiniteMagnitude, .leastFiniteMagnitude, .leastNonzeroMagnitude, 0,
        Decimal(string: "0.1", locale: posix)!, Decimal(string: "12345678901234567890.123456789", locale: posix)!,
        Decimal(string: "-0.000000000000000000000000000001", locale: posix)!,
        Decimal(string: "99999999999999999999999999999999999999", locale: posix)!,
        Decimal(string: "1e100", locale: posix)!, Decimal(string: "-7.75", locale: posix)!,
    ]
    static let posix = Locale(identifier: "en_US_POSIX")

    static let decimalFamily = ValueFamily(
        name: "decimals",
        summary: "Decimal across its range: the largest and smallest values, 38 significant digits, tiny and huge "
            + "exponents, values wider than a Double",
        count: decimals.count,
        fill: { specimen, index in specimen.price = cycle(decimals, index) },
        differences: { found, expected in found.price == expected.price ? [] : ["price"] },
        predicates: { ValueProbe.ordered(\Specimen.price, "price", decimals) },
        sorts: {
            [
                ("price", nil, [SortDescriptor(\Specimen.price)]),
                ("price descending", nil, [SortDescriptor(\Specimen.price, order: .reverse)]),
            ]
        })
}
