import Foundation
import ModelStore

/// A named descriptor of the differential corpus.
struct CorpusEntry: Sendable, CustomStringConvertible {
    let name: String
    let build: DescriptorBuilder
    var description: String { name }
}

/// The predicates of the differential corpus: every node kind the translator knows, over every
/// value kind of ``Reading``, and nodes it does not know (which must still agree).
enum QueryCorpus {
    static func entry(_ name: String, _ predicate: Predicate<Reading>) -> CorpusEntry {
        CorpusEntry(name: name) { _ in FetchDescriptor(predicate: predicate) }
    }

    static func entry(_ name: String, _ build: @escaping @Sendable (ModelContext) throws -> Predicate<Reading>)
        -> CorpusEntry
    {
        CorpusEntry(name: name) { context in FetchDescriptor(predicate: try build(context)) }
    }

    // Captured values (`#Predicate` cannot name enum cases or static members directly).
    static let lo = 2
    static let hi = 7
    static let intMax = Int.max
    static let intMin = Int.min
    static let bigUInt = UInt64.max - 1
    static let maxUInt = UInt64.max
    static let notANumber = Double(0) / Double(0)
    static let minusInfinity = -Double.infinity
    static let decimalOneTenth = Decimal(string: "1.1")!
    static let decimalZero = Decimal(0)
    static let names = ["a", "Rome", "zeta", ""]
    static let midDate = QueryDataset.epoch.addingTimeInterval(7_200)
    static let earlyDate = QueryDataset.epoch.addingTimeInterval(3_600)
    static let someUUID = QueryDataset.uuids[1]
    static let someURL = QueryDataset.urls[1]
    static let someData = QueryDataset.datas[1]
    static let emptyData = Data()
    static let high = QueryLevel.high
    static let low = QueryLevel.low
    static let levels = [QueryLevel.low, QueryLevel.high]
    static let optionalLevels: [QueryLevel?] = [nil, QueryLevel.mid]
    static let closed = 1...8
    static let from = 1.0...
    static let upTo = ..<"a"
    static let through = ...Decimal(1)
    static let notes: [String?] = [nil, "x"]

    static let entries: [CorpusEntry] = [
        // Bool
        entry("flag", #Predicate { $0.flag }),
        entry("!flag", #Predicate { !$0.flag }),
        entry("flag == true", #Predicate { $0.flag == true }),
        entry("flag != false", #Predicate { $0.flag != false }),
        // Int and friends
        entry("int == 3", #Predicate { $0.int == 3 }),
        entry("int != 3", #Predicate { $0.int != 3 }),
        entry("int < 3", #Predicate { $0.int < 3 }),
        entry("int <= 3", #Predicate { $0.int <= 3 }),
        entry("int > 3", #Predicate { $0.int > 3 }),
        entry("int >= 3", #Predicate { $0.int >= 3 }),
        entry("3 < int (constant on the left)", #Predicate { 3 < $0.int }),
        entry("lo < int < hi", #Predicate { $0.int > lo && $0.int < hi }),
        entry("int < lo || int > hi", #Predicate { $0.int < lo || $0.int > hi }),
        entry("!(int > lo)", #Predicate { !($0.int > lo) }),
        entry("int == Int.max", #Predicate { $0.int == intMax }),
        entry("int < Int.min + 1 (folded)", #Predicate { $0.int < intMin + 1 }),
        entry("int > lo * 2 (folded)", #Predicate { $0.int > lo * 2 }),
        entry("int16 * 2 > 100 (arithmetic on a property)", #Predicate { $0.int16 * 2 > 100 }),
        entry("int8 < 0", #Predicate { $0.int8 < 0 }),
        entry("int16 >= 100", #Predicate { $0.int16 >= 100 }),
        entry("int32 == -1", #Predicate { $0.int32 == -1 }),
        entry("int64 > 1000", #Predicate { $0.int64 > 1_000 }),
        entry("uint > 5", #Predicate { $0.uint > 5 }),
        entry("uint8 == 255", #Predicate { $0.uint8 == 255 }),
        entry("uint16 <= 10", #Predicate { $0.uint16 <= 10 }),
        entry("uint32 > 70000", #Predicate { $0.uint32 > 70_000 }),
        entry("uint64 > max - 1", #Predicate { $0.uint64 > bigUInt }),
        entry("uint64 == max", #Predicate { $0.uint64 == maxUInt }),
        entry("uint64 >= 0", #Predicate { $0.uint64 >= 0 }),
        // Floating point and decimals
        entry("double > 1", #Predicate { $0.double > 1.0 }),
        entry("double == 0 (-0.0 too)", #Predicate { $0.double == 0 }),
        entry("double < 0", #Predicate { $0.double < 0 }),
        entry("double >= -infinity", #Predicate { $0.double >= minusInfinity }),
        entry("double == nan", #Predicate { $0.double == notANumber }),
        entry("double != nan", #Predicate { $0.double != notANumber }),
        entry("double != double (NaN check)", #Predicate { $0.double != $0.double }),
        entry("0 < double < 10", #Predicate { $0.double > 0 && $0.double < 10 }),
        entry("!(double < 2)", #Predicate { !($0.double < 2) }),
        entry("float > 1", #Predicate { $0.float > 1 }),
        entry("float <= 0.5", #Predicate { $0.float <= 0.5 }),
        entry("float != float", #Predicate { $0.float != $0.float }),
        entry("decimal == 1.1 (1.10 too)", #Predicate { $0.decimal == decimalOneTenth }),
        entry("decimal > 1", #Predicate { $0.decimal > 1 }),
        entry("decimal < 0", #Predicate { $0.decimal < decimalZero }),
        // Strings
        entry("text == empty", #Predicate { $0.text == "" }),
        entry("text != empty", #Predicate { $0.text != "" }),
        entry("text == Rome", #Predicate { $0.text == "Rome" }),
        entry("text < a", #Predicate { $0.text < "a" }),
        entry("text >= Z", #Predicate { $0.text >= "Z" }),
        entry("text contains o", #Predicate { $0.text.contains("o") }),
        entry("text contains empty", #Predicate { $0.text.contains("") }),
        entry("text contains OM", #Predicate { $0.text.contains("OM") }),
        entry("text starts with R", #Predicate { $0.text.starts(with: "R") }),
        entry("text starts with empty", #Predicate { $0.text.starts(with: "") }),
        entry("text isEmpty", #Predicate { $0.text.isEmpty }),
        entry("!text isEmpty", #Predicate { !$0.text.isEmpty }),
        entry("text == composed e-acute", #Predicate { $0.text == "\u{E9}" }),
        entry("text contains /(?i)rome/", #Predicate { $0.text.contains(/(?i)rome/) }),
        entry("text contains /^[A-Z]/", #Predicate { $0.text.contains(/^[A-Z]/) }),
        entry("names contains text", #Predicate { names.contains($0.text) }),
        entry("!names contains text", #Predicate { !names.contains($0.text) }),
        entry("text count > 2", #Predicate { $0.text.count > 2 }),
        // Dates, UUIDs, URLs, data
        entry("date > mid", #Predicate { $0.date > midDate }),
        entry("date == mid", #Predicate { $0.date == midDate }),
        entry("date <= early", #Predicate { $0.date <= earlyDate }),
        entry("uuid == some", #Predicate { $0.uuid == someUUID }),
        entry("uuid > some", #Predicate { $0.uuid > someUUID }),
        entry("url == some", #Predicate { $0.url == someURL }),
        entry("data == some", #Predicate { $0.data == someData }),
        entry("data != empty", #Predicate { $0.data != emptyData }),
        // Optionals
        entry("note == nil", #Predicate { $0.note == nil }),
        entry("note != nil", #Predicate { $0.note != nil }),
        entry("note == x", #Predicate { $0.note == "x" }),
        entry("note != x", #Predicate { $0.note != "x" }),
        entry("(note ?? empty) == empty", #Predicate { ($0.note ?? "") == "" }),
        entry("(note ?? none) == none", #Predicate { ($0.note ?? "none") == "none" }),
        entry("(note ?? m) > a", #Predicate { ($0.note ?? "m") > "a" }),
        entry("note?.isEmpty == true", #Predicate { $0.note?.isEmpty == true }),
        entry("note.flatMap contains o == true", #Predicate { $0.note.flatMap { $0.contains("o") } == true }),
        entry("note.flatMap starts with N ?? false", #Predicate { $0.note.flatMap { $0.starts(with: "N") } ?? false }),
        entry("note.flatMap starts with N ?? true", #Predicate { $0.note.flatMap { $0.starts(with: "N") } ?? true }),
        entry("note?.count == 1", #Predicate { $0.note?.count == 1 }),
        entry("notes contains note", #Predicate { notes.contains($0.note) }),
        entry("score == nil", #Predicate { $0.score == nil }),
        entry("(score ?? 0) > 0.5", #Predicate { ($0.score ?? 0) > 0.5 }),
        entry("(score ?? -1) < 0", #Predicate { ($0.score ?? -1) < 0 }),
        entry("score.flatMap > 1 == false", #Predicate { $0.score.flatMap { $0 > 1 } == false }),
        entry("count == 0", #Predicate { $0.count == 0 }),
        entry("count != nil && count! > 2", #Predicate { $0.count != nil && $0.count! > 2 }),
        entry("(count ?? 0) >= 5", #Predicate { ($0.count ?? 0) >= 5 }),
        // Enums
        entry("level == high", #Predicate { $0.level == high }),
        entry("level != high", #Predicate { $0.level != high }),
        entry("level.rawValue == low", #Predicate { $0.level.rawValue == "low" }),
        entry("level.rawValue > l", #Predicate { $0.level.rawValue > "l" }),
        entry("optionalLevel == nil", #Predicate { $0.optionalLevel == nil }),
        entry("optionalLevel == low", #Predicate { $0.optionalLevel == low }),
        entry("optionalLevel != low", #Predicate { $0.optionalLevel != low }),
        entry("levels contains level", #Predicate { levels.contains($0.level) }),
        entry("optionalLevels contains optionalLevel", #Predicate { optionalLevels.contains($0.optionalLevel) }),
        // To-one
        entry("station == nil", #Predicate { $0.station == nil }),
        entry("station != nil", #Predicate { $0.station != nil }),
        entry("station?.name == North", #Predicate { $0.station?.name == "North" }),
        entry("station?.name != North", #Predicate { $0.station?.name != "North" }),
        entry("(station?.elevation ?? 0) > 100", #Predicate { ($0.station?.elevation ?? 0) > 100 }),
        entry("station?.region == nil", #Predicate { $0.station?.region == nil }),
        entry(
            "station.flatMap elevation > 500 == true",
            #Predicate { $0.station.flatMap { $0.elevation > 500 } == true }),
        entry("station?.name.contains(o) == true", #Predicate { $0.station?.name.contains("o") == true }),
        entry("station id == North") { context in
            let north = try KnownModels.station("North", in: context)
            return #Predicate { $0.station?.persistentModelID == north }
        },
        // To-many
        entry("tags isEmpty", #Predicate { $0.tags.isEmpty }),
        entry("!tags isEmpty", #Predicate { !$0.tags.isEmpty }),
        entry("tags contains weight > 2", #Predicate { $0.tags.contains { $0.weight > 2 } }),
        entry("tags contains label == red", #Predicate { $0.tags.contains { $0.label == "red" } }),
        entry("tags allSatisfy weight > 0", #Predicate { $0.tags.allSatisfy { $0.weight > 0 } }),
        entry("tags allSatisfy label starts with b", #Predicate { $0.tags.allSatisfy { $0.label.starts(with: "b") } }),
        entry(
            "tags contains red && weight >= 2",
            #Predicate { $0.tags.contains { $0.label == "red" && $0.weight >= 2 } }),
        entry("tags contains reading?.flag == true", #Predicate { $0.tags.contains { $0.reading?.flag == true } }),
        entry("tags count > 1", #Predicate { $0.tags.count > 1 }),
        // Ranges
        entry("(lo...hi) contains int", #Predicate { (lo...hi).contains($0.int) }),
        entry("(lo..<hi) contains int", #Predicate { (lo..<hi).contains($0.int) }),
        entry("captured closed range contains int", #Predicate { closed.contains($0.int) }),
        entry("captured 1.0... contains double", #Predicate { from.contains($0.double) }),
        entry("captured ..<a contains text", #Predicate { upTo.contains($0.text) }),
        entry("captured ...1 contains decimal", #Predicate { through.contains($0.decimal) }),
        // Identifiers
        entry("persistentModelID == R03") { context in
            let id = try KnownModels.reading("R03", in: context)
            return #Predicate { $0.persistentModelID == id }
        },
        entry("ids contains persistentModelID") { context in
            let ids = try ["R01", "R05", "R30"].map { try KnownModels.reading($0, in: context) }
            return #Predicate { ids.contains($0.persistentModelID) }
        },
        entry("id != R03") { context in
            let id = try KnownModels.reading("R03", in: context)
            return #Predicate { $0.persistentModelID != id }
        },
        // Combinations
        entry("ternary int > 3 ? flag : !flag", #Predicate { $0.int > 3 ? $0.flag : !$0.flag }),
        entry("three conditions", #Predicate { $0.flag && $0.int > 2 && $0.text.contains("a") }),
        entry("pushed and model conditions", #Predicate { $0.int > 2 && $0.text.count > 1 && $0.flag }),
        entry("disjunction with untranslatable side", #Predicate { $0.int > 0 || $0.text.count > 3 }),
        entry("note != nil && note != x", #Predicate { !($0.note == nil) && $0.note != "x" }),
        entry("nested or and not", #Predicate { ($0.flag || $0.int < 0) && !($0.text == "" || $0.note == nil) }),
        entry("double in range or nan", #Predicate { ($0.double >= 0 && $0.double <= 3) || $0.double != $0.double }),
        entry(
            "everything at once",
            #Predicate {
                $0.int >= -5 && $0.station?.name != "South" && $0.tags.allSatisfy { $0.weight < 4 }
                    && ($0.score ?? 0) < 5
            }),
    ]
}
