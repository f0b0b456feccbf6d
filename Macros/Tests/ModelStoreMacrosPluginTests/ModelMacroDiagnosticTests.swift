import SwiftSyntaxMacrosGenericTestSupport
import Testing

/// Every diagnostic of the macros, where it points, and its fix-its.
struct ModelMacroDiagnosticTests {
    @Test func modelOnAnEnumIsAnError() {
        assertExpansion(
            #"""
            @Model
            enum Trip {
                case a
            }
            """#,
            expandedSource: #"""
                enum Trip {
                    case a
                }
                """#,
            diagnostics: [
                DiagnosticSpec(
                    message: #"'@Model' applies to classes, and this is an enum: declare the model as a 'final class'"#,
                    line: 2, column: 1)
            ]
        )
    }

    @Test func propertiesOfTypesThatCannotBeStoredAreErrors() {
        assertExpansion(
            #"""
            @Model
            final class Trip {
                var action: () -> Void
                var pair: (Int, Int)
                var shape: any Shape
            }
            """#,
            expandedSource: #"""
                final class Trip {
                    var action: () -> Void
                    var pair: (Int, Int)
                    var shape: any Shape
                }
                """#,
            diagnostics: [
                DiagnosticSpec(
                    message:
                        #"'action' is of type '() -> Void' and a function cannot be stored: mark it '@Transient', or store a Codable value instead"#,
                    line: 3, column: 17),
                DiagnosticSpec(
                    message:
                        #"'pair' is of type '(Int, Int)' and a tuple cannot be stored: mark it '@Transient', or store a Codable value instead"#,
                    line: 4, column: 15),
                DiagnosticSpec(
                    message:
                        #"'shape' is of type 'any Shape' and 'any' types cannot be stored: mark it '@Transient', or store a Codable value instead"#,
                    line: 5, column: 16),
            ]
        )
    }

    @Test func inversesThatCannotPointBackAreErrors() {
        assertExpansion(
            #"""
            @Model
            final class Trip {
                @Relationship(inverse: \Destination.trips) var items: [Item]
                @Relationship(inverse: \.trip) var stops: [Stop]
                @Relationship(inverse: \Leg.trip.name) var legs: [Leg]
            }
            """#,
            expandedSource: #"""
                final class Trip {
                    var items: [Item]
                    var stops: [Stop]
                    var legs: [Leg]
                }
                """#,
            diagnostics: [
                DiagnosticSpec(
                    message:
                        #"the inverse of 'items', '\Destination.trips', is a property of 'Destination', but 'items' holds 'Item' models: name a relationship of 'Item' that points back"#,
                    line: 3, column: 28),
                DiagnosticSpec(
                    message: #"the inverse of 'stops' must name its model type: write '\Stop.property'"#, line: 4,
                    column: 28, fixIts: [FixItSpec(message: #"write '\Stop.trip'"#)]),
                DiagnosticSpec(
                    message:
                        #"the inverse of 'legs', '\Leg.trip.name', must be a single property of the related model"#,
                    line: 5, column: 28),
            ]
        )
    }

    @Test func relationshipsToValuesAreErrors() {
        assertExpansion(
            #"""
            @Model
            final class Trip {
                @Relationship var tags: [String]
                @Relationship var owner: Person
            }
            """#,
            expandedSource: #"""
                final class Trip {
                    var tags: [String]
                    var owner: Person
                }
                """#,
            diagnostics: [
                DiagnosticSpec(
                    message:
                        #"'@Relationship' property 'tags' holds 'String' values, which are not models: remove '@Relationship' to store them as an attribute"#,
                    line: 3, column: 29, fixIts: [FixItSpec(message: #"remove '@Relationship'"#)]),
                DiagnosticSpec(
                    message:
                        #"'@Relationship' property 'owner' is of type 'Person': a relationship is an optional model ('Trip?') or an array of models ('[Trip]')"#,
                    line: 4, column: 30, fixIts: [FixItSpec(message: #"remove '@Relationship'"#)]),
            ]
        )
    }

    @Test func letLazyAndUntypedPropertiesAreErrors() {
        assertExpansion(
            #"""
            @Model
            final class Trip {
                let id: UUID
                lazy var cache = 0
                var a, b: Int
                var unknown = makeValue()
            }
            """#,
            expandedSource: #"""
                final class Trip {
                    let id: UUID
                    lazy var cache = 0
                    var a, b: Int
                    var unknown = makeValue()
                }
                """#,
            diagnostics: [
                DiagnosticSpec(
                    message:
                        #"'@Model' cannot store a 'let' property: make it a 'var', or a computed property if it is derived"#,
                    line: 3, column: 5, fixIts: [FixItSpec(message: #"replace 'let' with 'var'"#)]),
                DiagnosticSpec(
                    message:
                        #"'@Model' cannot store a 'lazy' property: make it a stored 'var' with an initial value, or computed"#,
                    line: 4, column: 10),
                DiagnosticSpec(
                    message:
                        #"'@Model' stores one property per declaration: declare each property on a line of its own"#,
                    line: 5, column: 9),
                DiagnosticSpec(
                    message:
                        #"'@Model' needs the type of 'unknown' written out (it declares the property's storage from it): add ': Type' after the name"#,
                    line: 6, column: 9),
            ]
        )
    }

    @Test func attributesOutsideAModelAreErrors() {
        assertExpansion(
            #"""
            final class Trip {
                @Attribute(.unique) var name: String = ""
                @Transient var isExpanded = false
            }
            """#,
            expandedSource: #"""
                final class Trip {
                    var name: String = ""
                    var isExpanded = false
                }
                """#,
            diagnostics: [
                DiagnosticSpec(
                    message: #"'@Attribute' only works on a property of a '@Model' class: add '@Model' to the class"#,
                    line: 2, column: 5),
                DiagnosticSpec(
                    message: #"'@Transient' only works on a property of a '@Model' class: add '@Model' to the class"#,
                    line: 3, column: 5),
            ]
        )
    }

    @Test func constraintsNeedATypeAndKeyPathArrays() {
        assertExpansion(
            #"""
            @Model
            final class Trip {
                #Unique([\.name])
                #Index<Trip>(names)
                var name: String
            }
            """#,
            expandedSource: #"""
                final class Trip {
                    var name: String {
                        @storageRestrictions(initializes: _name)
                        init(initialValue) {
                            ModelStoreMacros._ModelStorageCheck.attribute(String.self)
                            _name = ModelStore.Attribute<String>(wrappedValue: initialValue)
                        }
                        get {
                            ModelStore.Attribute<String> [_enclosingInstance: self, wrapped: \.name, storage: \._name]
                        }
                        set {
                            ModelStore.Attribute<String> [_enclosingInstance: self, wrapped: \.name, storage: \._name] = newValue
                        }
                    }

                    private final var _name: ModelStore.Attribute<String>

                    let persistentBackingData = ModelStore.BackingData()

                    /// Creates a model for the framework to load stored values into; each property without an
                    /// initial value starts as a placeholder.
                    init() {
                        self.name = ""
                    }

                    /// The model's compound uniqueness constraints and indexes, from its `#Unique` and `#Index`.
                    static var constraints: [ModelStore.ModelConstraint<Trip>] {
                        [.unique(\.name)]
                    }

                    /// The storage of an unmarked optional or array of this model in a model: a relationship.
                    typealias _ModelStoreStorage<Value: ModelStore.RelationshipValue> = ModelStore.Relationship<Value>
                }

                extension Trip: ModelStore.PersistentModel, ModelStore.RelationshipContent, ModelStoreMacros._MacroModel {
                }
                """#,
            diagnostics: [
                DiagnosticSpec(
                    message: #"'#Unique' needs the model type: write '#Unique<Trip>([\.name])'"#, line: 3, column: 5),
                DiagnosticSpec(
                    message:
                        #"the arguments of '#Index' are arrays of key paths of the model, such as '[\.name, \.start]'"#,
                    line: 4, column: 18),
            ]
        )
    }

    @Test func modelActorOnAClassIsAnError() {
        assertExpansion(
            #"""
            @ModelActor
            final class Importer {}
            """#,
            expandedSource: #"""
                final class Importer {}
                """#,
            diagnostics: [
                DiagnosticSpec(
                    message: #"'@ModelActor' applies to actors: declare the type as an 'actor'"#, line: 2, column: 7)
            ]
        )
    }
}

/// The fix-its, applied.
struct ModelMacroFixItTests {
    @Test func aStructBecomesAFinalClass() {
        assertExpansion(
            "@Model\nstruct Trip {\n    var name: String\n}",
            expandedSource: "struct Trip {\n    var name: String\n}",
            diagnostics: [
                DiagnosticSpec(
                    message: "'@Model' applies to classes, and this is a struct: declare the model as a 'final class'",
                    line: 2, column: 1, fixIts: [FixItSpec(message: "make it a 'final class'")])
            ],
            fixedSource: "@Model\nfinal class Trip {\n    var name: String\n}")
    }

    @Test func aSubclassDeclaresNoConstraints() {
        assertExpansion(
            "@Model\nclass BusinessTrip: Trip {\n    #Unique<BusinessTrip>([\\.perks])\n}",
            expandedSource: "class BusinessTrip: Trip {\n}",
            diagnostics: [
                DiagnosticSpec(
                    message: "'#Unique' in '@Model' subclass 'BusinessTrip' is not supported: a hierarchy's "
                        + "constraints belong to its root class; declare '#Unique' in the root '@Model' class",
                    line: 3, column: 5)
            ],
            inheritsModel: true)
    }

    @Test func aUniqueToManyRelationshipIsAnError() {
        assertExpansion(
            "@Model\nfinal class Trip {\n    @Relationship(.unique) var stops: [Stop]\n}",
            expandedSource: "final class Trip {\n    var stops: [Stop]\n}",
            diagnostics: [
                DiagnosticSpec(
                    message: "'.unique' applies to a to-one relationship, and 'stops' is of type '[Stop]': uniqueness "
                        + "compares one related model ('Trip?'); remove '.unique', or declare '#Unique' on the "
                        + "related model's inverse to-one relationship",
                    line: 3, column: 19)
            ])
    }

    /// The subclass's members are not added; its property's own expansion is (the compiler then
    /// reports what it lacks), as for any other error `@Model` reports on a subclass.
    @Test func aUniqueRelationshipInASubclassIsAnError() {
        assertExpansion(
            "@Model\nclass BusinessTrip: Trip {\n    @Relationship(.unique) var client: Client?\n}",
            expandedSource: #"""
                class BusinessTrip: Trip {
                    var client: Client? {
                        @storageRestrictions(initializes: _client, accesses: _$relationshipsToLink)
                        init(initialValue) {
                            ModelStoreMacros._ModelStorageCheck.relationship(Client?.self)
                            _client = ModelStore.Relationship<Client?>(wrappedValue: initialValue)
                            if !initialValue.relatedModels.isEmpty {
                                _$relationshipsToLink.append { model in
                                    model._client = ModelStore.Relationship<Client?>(wrappedValue: .init(relatedModels: []))
                                    model.client = initialValue
                                }
                            }
                        }
                        get {
                            ModelStore.Relationship<Client?> [_enclosingInstance: self, wrapped: \.client, storage: \._client]
                        }
                        set {
                            ModelStore.Relationship<Client?> [_enclosingInstance: self, wrapped: \.client, storage: \._client] = newValue
                        }
                    }

                    private final var _client: ModelStore.Relationship<Client?>
                }
                """#,
            diagnostics: [
                DiagnosticSpec(
                    message: "'.unique' on relationship 'client' of '@Model' subclass 'BusinessTrip' is not "
                        + "supported: a hierarchy's uniqueness constraints are its root class's, over the root's "
                        + "properties; declare 'client' in the root class, or remove '.unique'",
                    line: 3, column: 19)
            ],
            inheritsModel: true)
    }

    @Test func letBecomesVarAndTheInverseGetsItsType() {
        assertExpansion(
            #"""
            @Model
            final class Trip {
                let code: Int
                @Relationship(inverse: \.trip) var stops: [Stop]
                @Relationship var tags: [String]
            }
            """#,
            expandedSource: #"""
                final class Trip {
                    let code: Int
                    var stops: [Stop]
                    var tags: [String]
                }
                """#,
            diagnostics: [
                DiagnosticSpec(
                    message: "'@Model' cannot store a 'let' property: make it a 'var', or a computed property if it "
                        + "is derived", line: 3, column: 5, fixIts: [FixItSpec(message: "replace 'let' with 'var'")]),
                DiagnosticSpec(
                    message: #"the inverse of 'stops' must name its model type: write '\Stop.property'"#, line: 4,
                    column: 28, fixIts: [FixItSpec(message: #"write '\Stop.trip'"#)]),
                DiagnosticSpec(
                    message: "'@Relationship' property 'tags' holds 'String' values, which are not models: remove "
                        + "'@Relationship' to store them as an attribute", line: 5, column: 29,
                    fixIts: [FixItSpec(message: "remove '@Relationship'")]),
            ],
            fixedSource: #"""
                @Model
                final class Trip {
                    var code: Int
                    @Relationship(inverse: \Stop.trip) var stops: [Stop]
                    var tags: [String]
                }
                """#)
    }

    @Test func aGenericModelIsAnError() {
        assertExpansion(
            "@Model\nfinal class Box<Value: Codable> {\n    var value: Value\n}",
            expandedSource: "final class Box<Value: Codable> {\n    var value: Value\n}",
            diagnostics: [
                DiagnosticSpec(
                    message: "'@Model' class 'Box' cannot be generic: a model class is one entity of the schema, "
                        + "with one stored type per property; declare a model class per type ('final class "
                        + "IntBox'), or give the property a Codable type that covers every case (an enum with a "
                        + "case per type)",
                    line: 2, column: 16)
            ])
    }

    @Test func modelOnAnActorOrAnExtensionIsAnError() {
        assertExpansion(
            "@Model\nactor Trip {}\n@Model\nextension Item {}",
            expandedSource: "actor Trip {}\nextension Item {}",
            diagnostics: [
                DiagnosticSpec(
                    message: "'@Model' applies to classes, and this is an actor: declare the model as a 'final class'",
                    line: 2, column: 1),
                DiagnosticSpec(
                    message: "'@Model' applies to classes, and this is an extension: declare the model as a "
                        + "'final class'", line: 4, column: 1),
            ])
    }
}
