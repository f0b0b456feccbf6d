import Foundation
import ModelStore

/// The deterministic data of the query corpus: every edge the differential tests care about
/// (`NaN`, `-0.0`, infinities, empty and mixed-case strings, composed and decomposed accents,
/// `nil`s, ties, missing relationships).
enum QueryDataset {
    static let epoch = Date(timeIntervalSinceReferenceDate: 700_000_000)
    static let texts = [
        "", "a", "A", "abc", "ABC", "Abc", "rome", "Rome", "ROME", "\u{E9}", "e\u{301}", "zeta", "Zeta",
        " space", "a b", "10", "9", "Rome",
    ]
    static let doubles: [Double] = [0, -0.0, 1.5, -2.25, .nan, .infinity, -.infinity, 3, 1e-9, 100, 3, .nan]
    static let floats: [Float] = [0, 0.5, -1, .nan, 2.5, 100, 0.5]
    static let decimals = ["0", "1.10", "1.1", "-3.5", "100", "2.000", "0.0001"].map { Decimal(string: $0)! }
    static let ints = [-5, 0, 1, 2, 3, 7, 42, Int.max, Int.min, 3, 3, 8]
    static let notes: [String?] = [nil, "", "x", "Note", "nox", nil, "X"]
    static let scores: [Double?] = [nil, .nan, 1.0, 0.25, -3, nil, 2]
    static let counts: [Int?] = [nil, 0, 5, 2, nil, 9]
    static let uuids = (0..<4).map { UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, UInt8($0 * 40))) }
    static let urls = ["https://example.com", "https://example.com/a", "file:///tmp/x"].map { URL(string: $0)! }
    static let datas = [Data(), Data([1, 2]), Data([0])]
    static let labels = ["red", "blue", "bright", "Red", ""]

    static let count = 40

    /// Inserts the stations, readings and tags, and saves.
    static func seed(_ context: ModelContext) throws {
        let stations = [
            Station("North", elevation: 900, region: "Alps"), Station("South", elevation: 10),
            Station("Port", elevation: 100, region: "Coast"),
        ]
        for index in 0..<count {
            let reading = Reading()
            reading.code = String(format: "R%02d", index)
            reading.flag = index % 3 == 0
            reading.int = ints[index % ints.count]
            reading.int8 = [Int8.min, -1, 0, 5, Int8.max][index % 5]
            reading.int16 = Int16(index * 37 - 400)
            reading.int32 = [-1, 0, 70_000, Int32.max][index % 4]
            reading.int64 = Int64(index) * 123 - 2_000
            reading.uint = UInt(index % 9)
            reading.uint8 = [0, 255, 7][index % 3]
            reading.uint16 = UInt16(index % 13)
            reading.uint32 = [0, 80_000, UInt32.max][index % 3]
            reading.uint64 = [0, UInt64.max, UInt64.max - 1, 12][index % 4]
            reading.double = doubles[index % doubles.count]
            reading.float = floats[index % floats.count]
            reading.decimal = decimals[index % decimals.count]
            reading.text = texts[index % texts.count]
            reading.date = epoch.addingTimeInterval(Double((index % 6) * 3_600))
            reading.data = datas[index % datas.count]
            reading.uuid = uuids[index % uuids.count]
            reading.url = urls[index % urls.count]
            reading.note = notes[index % notes.count]
            reading.score = scores[index % scores.count]
            reading.count = counts[index % counts.count]
            reading.level = QueryLevel.allCases[index % 3]
            reading.optionalLevel = index % 4 == 0 ? nil : QueryLevel.allCases[(index / 4) % 3]
            reading.station = index % 5 == 4 ? nil : stations[index % 3]
            reading.tags = (0..<(index % 4)).map {
                Tag(labels[(index + $0) % labels.count], weight: (index * 7 + $0) % 5)
            }
            context.insert(reading)
        }
        try context.save()
    }

    /// Sensors for batch operations.
    static func seedSensors(_ context: ModelContext) throws {
        for index in 0..<24 {
            context.insert(
                Sensor(
                    String(format: "S%02d", index), value: doubles[index % doubles.count],
                    rank: counts[index % counts.count],
                    label: texts[index % texts.count]))
        }
        try context.save()
    }
}
