import Foundation
import ModelStore

/// A deterministic graph of fixture models, built detached (in no context).
///
/// The values are chosen to expose divergences: ties in sort keys (and ties on a first key that the
/// second key breaks), `nil`s in optionals, strings that differ only in case or in Unicode
/// normalization (`"e\u{301}mile"` and `"émile"`, `"North"` and `"north"` as unique values), `-0.0`,
/// negative and very large integers, fractional dates, empty data and arrays, specimens with and
/// without a folder, reference cycles (`peer`), and a relationship chain three levels deep
/// (cabinet, folder, note, remark). Every model of an entity differs from every other in the
/// attributes a case reads, so models swapped by a store never compare equal.
struct Seed {
    let cabinets: [Cabinet]
    let folders: [Folder]
    let specimens: [Specimen]
    let notes: [Note]
    let remarks: [Remark]
    let holds: [Hold]
    let entries: [LogEntry]

    static let specimenCount = 36
    static let titles = [
        "apple", "Apple", "banana", "Éclair", "eclair", "zebra", "Zebra", "naïve", "nai\u{0308}ve",
        "Ωmega", "omega", "", "a b", "ab", "10", "9", "Banana split", "çava", "e\u{301}mile", "émile", "Émile",
    ]
    static let folderNames = ["Alpha", "beta", "Gamma", "delta"]

    /// The cabinets' labels: unique values that differ only in case.
    static let cabinetLabels = ["North", "north"]

    /// The standard seed: 2 cabinets, 4 folders, 36 specimens, 13 notes, 14 remarks, 1 hold and 30 log entries.
    ///
    /// Cabinet 'North' holds 'Alpha' and 'beta'; 'north' holds 'Gamma' (which has the hold); 'delta' is in
    /// no cabinet. Every note in a folder has a remark ('note-Alpha-0' has two); one remark has no note.
    static func make() -> Seed {
        let cabinets = cabinetLabels.map { label in
            let cabinet = Cabinet()
            cabinet.label = label
            return cabinet
        }
        let folders = folderNames.enumerated().map { index, name in
            let folder = Folder()
            folder.name = name
            folder.position = [3, 1, 2, 0][index]
            folder.cabinet = [cabinets[0], cabinets[0], cabinets[1], nil][index]
            return folder
        }
        let specimens = (0..<specimenCount).map { makeSpecimen($0) }
        for (index, specimen) in specimens.enumerated() {
            if index % 5 < 4 { specimen.folder = folders[index % 5] }
            if index % 9 == 0 {
                specimen.peer = specimen
            } else {
                specimen.peer = specimens[index % 2 == 0 ? min(index + 1, specimenCount - 1) : index - 1]
            }
        }
        var notes: [Note] = []
        for (folderIndex, folder) in folders.enumerated() {
            for order in 0..<3 {
                let note = Note()
                note.text = "note-\(folder.name)-\(order)"
                note.order = order
                note.folder = folder
                note.subject = specimens[folderIndex * 3 + order]
                notes.append(note)
            }
        }
        let loose = Note()
        loose.text = "note-loose"
        loose.order = 9
        notes.append(loose)
        var remarks: [Remark] = []
        for note in notes where note.folder != nil {
            let remark = Remark()
            remark.text = "remark-\(note.text)"
            remark.note = note
            remarks.append(remark)
        }
        let second = Remark()
        second.text = "remark-note-Alpha-0-second"
        second.note = notes[0]
        let looseRemark = Remark()
        looseRemark.text = "remark-loose"
        remarks += [second, looseRemark]
        let hold = Hold()
        hold.reason = "audit"
        hold.folder = folders[2]
        let entries = (1...30).map { sequence in
            let entry = LogEntry()
            entry.sequence = sequence
            entry.label = "entry-\(sequence)"
            entry.bucket = sequence % 4
            return entry
        }
        return Seed(
            cabinets: cabinets, folders: folders, specimens: specimens, notes: notes, remarks: remarks, holds: [hold],
            entries: entries)
    }

    /// A specimen with every attribute set from its index.
    static func makeSpecimen(_ index: Int, code: String? = nil) -> Specimen {
        let specimen = Specimen()
        specimen.code = code ?? specimenCode(index)
        specimen.series = ["north", "south", "east"][index % 3]
        specimen.serial = index / 3
        specimen.isActive = index % 2 == 0
        specimen.count = index % 5
        specimen.tiny = Int8(index - 18)
        specimen.small = Int16(index * 100 - 1000)
        specimen.medium = Int32(index * 100_000)
        specimen.large = Int64(index) * 1_000_000_000_000 - 5
        specimen.unsigned = UInt(index * 7)
        specimen.byte = UInt8(index * 7 % 256)
        specimen.word = UInt16(index * 1000)
        specimen.doubleWord = UInt32(index) * 100_000
        specimen.quadWord = UInt64.max - UInt64(index)
        specimen.weight = Double(index % 7) * 1.5 + 0.25
        specimen.ratio = index == 0 ? -0.0 : Float(index) / 4  // -0.0: its sign MUST round-trip
        // Every ninth price has more digits than a Double holds: it MUST NOT pass through floating point.
        let digits = index % 9 == 8 ? "\(index)000000000.000000000000000\(index % 10)1" : "\(index).\(index % 10)5"
        specimen.price = Decimal(string: digits, locale: Locale(identifier: "en_US_POSIX")) ?? Decimal(index)
        specimen.title = titles[index % titles.count]
        specimen.createdAt = Date(timeIntervalSinceReferenceDate: 700_000_000.125 + Double(index) * 86_400.5)
        specimen.payload = Data((0..<(index % 4 * 3)).map { UInt8(($0 * 17 + index) % 256) })
        specimen.token = UUID(
            uuid: (
                UInt8(index), 1, 2, 3, 4, 5, 0x40, 7, 0x80, 9, 10, 11, 12, 13, 14, UInt8(255 - index)
            ))
        specimen.homepage = URL(string: "https://example.com/specimens/\(index)?q=\(index % 3)")!
        specimen.nickname = index % 3 == 0 ? nil : "nick\(index % 4)"
        specimen.rank = index % 4 == 0 ? nil : index % 6
        // A fraction finer than a millisecond (and than PostgreSQL's microsecond): dates MUST round-trip exactly.
        specimen.reviewedAt = index % 5 == 0 ? nil : specimen.createdAt.addingTimeInterval(3600.000_123_4)
        specimen.tags = index % 7 == 0 ? [] : ["t\(index % 3)", "t\(index % 5)"]
        specimen.measurements = ["height": Double(index), "width": Double(index) / 2]
        specimen.labelsByNumber = [index: "n\(index)", -1: "minus one"]
        specimen.kind = SpecimenKind.allCases[index % 4]
        specimen.grade = index % 3 == 2 ? nil : SpecimenGrade.allCases[index % 3]
        specimen.origin = SpecimenOrigin(
            latitude: Double(index) - 18.5, longitude: Double(index) * 3, label: "site \(index)")
        specimen.attachment = Data(repeating: UInt8(index), count: index)
        return specimen
    }

    /// `S01`, `S02`, …: the unique code of the specimen at an index.
    static func specimenCode(_ index: Int) -> String {
        index < 9 ? "S0\(index + 1)" : "S\(index + 1)"
    }

    /// Inserts every model, in a fixed order.
    func insert(into context: ModelContext) {
        for cabinet in cabinets { context.insert(cabinet) }
        for folder in folders { context.insert(folder) }
        for specimen in specimens { context.insert(specimen) }
        for note in notes { context.insert(note) }
        for remark in remarks { context.insert(remark) }
        for hold in holds { context.insert(hold) }
        for entry in entries { context.insert(entry) }
    }

    /// How many models of each entity the seed has.
    var counts: [String: Int] {
        [
            "Cabinet": cabinets.count, "Folder": folders.count, "Specimen": specimens.count, "Note": notes.count,
            "Remark": remarks.count, "Hold": holds.count, "LogEntry": entries.count,
        ]
    }

    /// The counts, for messages: `2 Cabinet, 4 Folder, …`.
    var summary: String {
        counts.sorted { $0.key < $1.key }.map { "\($0.value) \($0.key)" }.joined(separator: ", ")
    }
}
