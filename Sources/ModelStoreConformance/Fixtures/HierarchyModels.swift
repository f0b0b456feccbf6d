import Foundation
import ModelStore

// The class hierarchy the inheritance cases store, in one entity (`Instrument`):
//
//   Instrument ─┬─ StringInstrument ── Violin
//               └─ Drum
//   Band ──cascade──▶ [Instrument]   (any class)

/// The root class: a unique name, a price, and the band that owns it.
class Instrument: PersistentModel {
    @Attribute(.unique) var name: String = ""
    @Attribute var price: Double = 0
    @Relationship var band: Band?

    let persistentBackingData = BackingData()
    required init() {}
}

/// An instrument with strings.
class StringInstrument: Instrument {
    @Attribute var strings: Int = 4
    @Attribute var tunings: [String] = []
}

/// A string instrument with a maker.
final class Violin: StringInstrument {
    @Attribute var maker: String = ""
}

/// An instrument with a diameter.
final class Drum: Instrument {
    @Attribute var diameter: Double = 14
}

/// A band whose instruments are of any class; deleting it deletes them.
final class Band: PersistentModel {
    @Attribute var title: String = ""
    @Relationship(deleteRule: .cascade, inverse: \Instrument.band) var instruments: [Instrument] = []

    let persistentBackingData = BackingData()
    init() {}
}

extension Fixtures {
    /// Every class of the hierarchy, and the band.
    static let hierarchyTypes: [any PersistentModel.Type] = [
        Instrument.self, StringInstrument.self, Violin.self, Drum.self, Band.self,
    ]
    /// The schema of the inheritance cases.
    static let hierarchySchema = Schema(hierarchyTypes)

    /// One band with one instrument of each class: `lute` (the root class), `bass`
    /// (StringInstrument, 4 strings), `strad` (Violin, 4 strings) and `snare` (Drum).
    @discardableResult
    static func seedHierarchy(_ context: ModelContext) throws -> Band {
        let band = Band()
        band.title = "quartet"
        context.insert(band)
        let lute = Instrument()
        lute.name = "lute"
        lute.price = 300
        let bass = StringInstrument()
        bass.name = "bass"
        bass.price = 900
        bass.tunings = ["EADG", "BEADG"]
        let strad = Violin()
        strad.name = "strad"
        strad.price = 5_000
        strad.maker = "Stradivari"
        strad.tunings = ["GDAE"]
        let snare = Drum()
        snare.name = "snare"
        snare.price = 150
        snare.diameter = 13
        band.instruments = [lute, bass, strad, snare]
        try context.save()
        return band
    }
}
