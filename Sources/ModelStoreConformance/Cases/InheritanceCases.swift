import Foundation
import ModelStore

/// Model classes with subclasses, stored in their root class's entity with each model's class
/// recorded: what a store must keep to make them work (nullable subclass properties, the class
/// attribute, and membership filters on it).
enum InheritanceCases {
    /// Every instrument as `Class name`, sorted by name, from a fresh context.
    static func classesAndNames(_ container: ModelContainer, _ env: CaseEnvironment) throws -> [String] {
        let context = env.freshContext(container)
        let models = try env.step("fetching every 'Instrument' (all classes)") {
            try context.fetch(FetchDescriptor<Instrument>(sortBy: [SortDescriptor(\.name)]))
        }
        return models.map { "\(type(of: $0)) \($0.name)" }
    }

    static let expectedClasses = ["StringInstrument bass", "Instrument lute", "Drum snare", "Violin strad"]

    static let all: [CaseDefinition] = [
        CaseDefinition(
            .inheritance, "fetchOfTheRootReturnsEveryClass",
            "A fetch of the root class returns a model of every class as its own class, with the properties "
                + "only its class declares, and sorts, counts and windows across the classes."
        ) { env in
            let container = try env.openHierarchyContainer()
            try Fixtures.seedHierarchy(env.freshContext(container))
            try env.checkEqual(
                try classesAndNames(container, env), expectedClasses,
                "a fetch of the root class lost a model or made it as the wrong class: the store did not keep "
                    + "the class attribute '\(Schema.Entity.classAttributeName)'")
            let context = env.freshContext(container)
            let strad = try env.require(
                try context.fetch(FetchDescriptor<Instrument>(predicate: #Predicate { $0.name == "strad" })).first
                    as? Violin, "'strad' did not come back as a Violin")
            try env.checkEqual(strad.maker, "Stradivari", "a subclass's own attribute did not round-trip")
            try env.checkEqual(strad.strings, 4, "an attribute of an intermediate class did not round-trip")
            try env.checkEqual(try context.fetchCount(FetchDescriptor<Instrument>()), 4, "the count of every class")
            var window = FetchDescriptor<Instrument>(sortBy: [SortDescriptor(\.price, order: .reverse)])
            window.fetchOffset = 1
            window.fetchLimit = 2
            try env.checkEqual(
                try context.fetch(window).map(\.name), ["bass", "lute"],
                "an offset and limit across classes, by price descending")
        },
        CaseDefinition(
            .inheritance, "fetchOfASubclassReturnsItsModelsOnly",
            "A fetch of a subclass returns its models and its own subclasses' only, with counts, sorts on its "
                + "own properties, predicates and windows that see no other class."
        ) { env in
            let container = try env.openHierarchyContainer()
            try Fixtures.seedHierarchy(env.freshContext(container))
            let context = env.freshContext(container)
            let strings = try context.fetch(
                FetchDescriptor<StringInstrument>(sortBy: [SortDescriptor(\.name)]))
            try env.checkEqual(
                strings.map { "\(type(of: $0)) \($0.name)" }, ["StringInstrument bass", "Violin strad"],
                "a fetch of 'StringInstrument' returned another class, or missed its subclass 'Violin'")
            try env.checkEqual(
                try context.fetchCount(FetchDescriptor<StringInstrument>()), 2, "the count of a subclass")
            try env.checkEqual(try context.fetch(FetchDescriptor<Drum>()).map(\.diameter), [13], "the drums")
            var first = FetchDescriptor<StringInstrument>(
                predicate: #Predicate { $0.strings >= 4 }, sortBy: [SortDescriptor(\.price)])
            first.fetchLimit = 1
            try env.checkEqual(
                try context.fetch(first).map(\.name), ["bass"],
                "a limit on a subclass's fetch counted models of other classes")
        },
        CaseDefinition(
            .inheritance, "typeTestsInPredicates",
            "`is` in a predicate tests each model's class, subclasses included, alone, negated and combined; `as?` "
                + "reads a subclass's own attributes, an array's `contains` among them."
        ) { env in
            let container = try env.openHierarchyContainer()
            try Fixtures.seedHierarchy(env.freshContext(container))
            let context = env.freshContext(container)
            let isString = #Predicate<Instrument> { $0 is StringInstrument }
            try env.checkEqual(
                try context.fetch(FetchDescriptor(predicate: isString, sortBy: [SortDescriptor(\.name)])).map(\.name),
                ["bass", "strad"], "'$0 is StringInstrument'")
            let cheapNotDrum = #Predicate<Instrument> { !($0 is Drum) && $0.price < 1_000 }
            try env.checkEqual(
                try context.fetch(FetchDescriptor(predicate: cheapNotDrum, sortBy: [SortDescriptor(\.name)])).map(
                    \.name), ["bass", "lute"], "'!($0 is Drum) && $0.price < 1000'")
            try env.checkEqual(
                try context.fetchCount(FetchDescriptor(predicate: #Predicate<Instrument> { $0 is Violin })), 1,
                "the count of '$0 is Violin'")
            // A cast to a subclass reads its own attributes; other classes take the `nil` case.
            let tunedToG = #Predicate<Instrument> { ($0 as? StringInstrument)?.tunings.contains("GDAE") == true }
            try env.checkEqual(
                try context.fetch(FetchDescriptor(predicate: tunedToG)).map(\.name), ["strad"],
                "'($0 as? StringInstrument)?.tunings.contains(\"GDAE\") == true'")
            let notByStradivari = #Predicate<Instrument> { ($0 as? Violin)?.maker != "Stradivari" }
            try env.checkEqual(
                try context.fetch(FetchDescriptor(predicate: notByStradivari, sortBy: [SortDescriptor(\.name)])).map(
                    \.name), ["bass", "lute", "snare"], "'($0 as? Violin)?.maker != \"Stradivari\"'")
        },
        CaseDefinition(
            .inheritance, "relationshipsToTheRootHoldEveryClass",
            "A to-many relationship to the root class holds models of every class, and its inverse reads back "
                + "from each of them."
        ) { env in
            let container = try env.openHierarchyContainer()
            try Fixtures.seedHierarchy(env.freshContext(container))
            let context = env.freshContext(container)
            let band = try env.require(try context.fetch(FetchDescriptor<Band>()).first, "the band is missing")
            try env.checkEqual(
                band.instruments.sorted { $0.name < $1.name }.map { "\(type(of: $0)) \($0.name)" },
                expectedClasses, "the band's instruments")
            let drum = try env.require(try context.fetch(FetchDescriptor<Drum>()).first, "the drum is missing")
            try env.checkEqual(drum.band?.title, "quartet", "a subclass model's inverse")
        },
        CaseDefinition(
            .inheritance, "cascadesAndUniquenessSpanTheHierarchy",
            "A cascade from the band deletes instruments of every class, and a unique attribute of the root "
                + "class refuses the same value in two classes, storing nothing of the refused save."
        ) { env in
            let container = try env.openHierarchyContainer()
            try Fixtures.seedHierarchy(env.freshContext(container))
            let context = env.freshContext(container)
            let copy = Drum()
            copy.name = "strad"
            context.insert(copy)
            try env.expectError(
                [.uniqueConstraintViolation], "saving a Drum named like the Violin 'strad'",
                ifItSucceeds: "a Drum and a Violin share the unique name 'strad': uniqueness holds per class only"
            ) { try context.save() }
            try env.checkEqual(
                try classesAndNames(container, env), expectedClasses, "after the refused save, the instruments changed")
            let cleanup = env.freshContext(container)
            let band = try env.require(try cleanup.fetch(FetchDescriptor<Band>()).first, "the band is missing")
            cleanup.delete(band)
            try env.step("deleting the band") { try cleanup.save() }
            try env.checkEqual(
                try classesAndNames(container, env), [],
                "deleting the band left instruments: the cascade skipped a class")
        },
        CaseDefinition(
            .inheritance, "deletesOfOneClass",
            "A delete of a class's models removes its subclasses' too, unless `includeSubclasses` is false, "
                + "and never touches its superclass or siblings."
        ) { env in
            let container = try env.openHierarchyContainer()
            try Fixtures.seedHierarchy(env.freshContext(container))
            let context = env.freshContext(container)
            try env.step("deleting string instruments without subclasses") {
                try context.delete(model: StringInstrument.self, includeSubclasses: false)
            }
            try env.checkEqual(
                try classesAndNames(container, env), ["Instrument lute", "Drum snare", "Violin strad"],
                "a delete of 'StringInstrument' without subclasses")
            try env.step("deleting string instruments") { try context.delete(model: StringInstrument.self) }
            try env.checkEqual(
                try classesAndNames(container, env), ["Instrument lute", "Drum snare"],
                "a delete of 'StringInstrument' with its subclasses")
        },
        CaseDefinition(
            .inheritance, "classesSurviveReopening",
            "After closing and reopening the store, every model reads back as its own class with its own values.",
            requires: .durability
        ) { env in
            do {
                let container = try env.openHierarchyContainer()
                try Fixtures.seedHierarchy(env.freshContext(container))
            }
            // The first container and its contexts go, closing the store, as `session` does.
            env.releaseContexts()
            let reopened = try env.openHierarchyContainer()
            try env.checkEqual(try classesAndNames(reopened, env), expectedClasses, "after reopening")
            let violin = try env.require(
                try env.freshContext(reopened).fetch(FetchDescriptor<Violin>()).first, "the violin is missing")
            try env.checkEqual(violin.maker, "Stradivari", "a subclass's attribute after reopening")
        },
    ]
}
