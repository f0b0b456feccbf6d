import Testing

/// What each SwiftData form expands to: golden expansions of `@Model`, its attributes and `@ModelActor`.
struct ModelMacroExpansionTests {
    @Test func attributesWithAndWithoutInitialValuesAndOptions() {
        assertExpansion(
            #"""
            @Model
            final class Trip {
                @Attribute(.unique) var name: String
                var start: Date = .now
                var count = 0
                var note: String?
                @Attribute(.externalStorage, .preserveValueOnDeletion, originalName: "picture", hashModifier: "v2") var photo: Data
                var kind: Kind
                static var shared = 1
                var computed: Int { count + 1 }

                init(name: String, kind: Kind) {
                    self.name = name
                    self.photo = Data()
                    self.kind = kind
                }
            }
            """#,
            expandedSource: #"""
                final class Trip {
                    var name: String {
                        @storageRestrictions(initializes: _name)
                        init(initialValue) {
                            ModelStoreMacros._ModelStorageCheck.attribute(String.self)
                            _name = ModelStore.Attribute<String>(wrappedValue: initialValue, [.unique])
                        }
                        get {
                            ModelStore.Attribute<String> [_enclosingInstance: self, wrapped: \.name, storage: \._name]
                        }
                        set {
                            ModelStore.Attribute<String> [_enclosingInstance: self, wrapped: \.name, storage: \._name] = newValue
                        }
                    }

                    private final var _name: ModelStore.Attribute<String>
                    var start: Date {
                        @storageRestrictions(initializes: _start)
                        init(initialValue) {
                            ModelStoreMacros._ModelStorageCheck.attribute(Date.self)
                            _start = ModelStore.Attribute<Date>(wrappedValue: initialValue)
                        }
                        get {
                            ModelStore.Attribute<Date> [_enclosingInstance: self, wrapped: \.start, storage: \._start]
                        }
                        set {
                            ModelStore.Attribute<Date> [_enclosingInstance: self, wrapped: \.start, storage: \._start] = newValue
                        }
                    }

                    private final var _start: ModelStore.Attribute<Date>
                    var count {
                        @storageRestrictions(initializes: _count)
                        init(initialValue) {
                            ModelStoreMacros._ModelStorageCheck.attribute(Int.self)
                            _count = ModelStore.Attribute<Int>(wrappedValue: initialValue)
                        }
                        get {
                            ModelStore.Attribute<Int> [_enclosingInstance: self, wrapped: \.count, storage: \._count]
                        }
                        set {
                            ModelStore.Attribute<Int> [_enclosingInstance: self, wrapped: \.count, storage: \._count] = newValue
                        }
                    }

                    private final var _count: ModelStore.Attribute<Int>
                    var note: String? {
                        @storageRestrictions(initializes: _note)
                        init(initialValue) {
                            ModelStoreMacros._ModelStorageCheck.attribute(String?.self)
                            _note = ModelStore.Attribute<String?>(wrappedValue: initialValue)
                        }
                        get {
                            ModelStore.Attribute<String?> [_enclosingInstance: self, wrapped: \.note, storage: \._note]
                        }
                        set {
                            ModelStore.Attribute<String?> [_enclosingInstance: self, wrapped: \.note, storage: \._note] = newValue
                        }
                    }

                    private final var _note: ModelStore.Attribute<String?>
                    var photo: Data {
                        @storageRestrictions(initializes: _photo)
                        init(initialValue) {
                            ModelStoreMacros._ModelStorageCheck.attribute(Data.self)
                            _photo = ModelStore.Attribute<Data>(wrappedValue: initialValue, [.externalStorage, .preserveValueOnDeletion], originalName: "picture")
                        }
                        get {
                            ModelStore.Attribute<Data> [_enclosingInstance: self, wrapped: \.photo, storage: \._photo]
                        }
                        set {
                            ModelStore.Attribute<Data> [_enclosingInstance: self, wrapped: \.photo, storage: \._photo] = newValue
                        }
                    }

                    private final var _photo: ModelStore.Attribute<Data>
                    var kind: Kind {
                        @storageRestrictions(initializes: _kind)
                        init(initialValue) {
                            ModelStoreMacros._ModelStorageCheck.attribute(Kind.self)
                            _kind = ModelStore.Attribute<Kind>(wrappedValue: initialValue)
                        }
                        get {
                            ModelStore.Attribute<Kind> [_enclosingInstance: self, wrapped: \.kind, storage: \._kind]
                        }
                        set {
                            ModelStore.Attribute<Kind> [_enclosingInstance: self, wrapped: \.kind, storage: \._kind] = newValue
                        }
                    }

                    private final var _kind: ModelStore.Attribute<Kind>
                    static var shared = 1
                    var computed: Int { count + 1 }

                    init(name: String, kind: Kind) {
                        self.name = name
                        self.photo = Data()
                        self.kind = kind
                    }

                    let persistentBackingData = ModelStore.BackingData()

                    private static let _$placeholder_kind = ModelStoreMacros._ModelPlaceholder<Kind>(model: "Trip", property: "kind")

                    /// Creates a model for the framework to load stored values into; each property without an
                    /// initial value starts as a placeholder.
                    init() {
                        self.name = ""
                        self.photo = Data()
                        self.kind = Self._$placeholder_kind.value
                    }

                    /// The storage of an unmarked optional or array of this model in a model: a relationship.
                    typealias _ModelStoreStorage<Value: ModelStore.RelationshipValue> = ModelStore.Relationship<Value>
                }

                extension Trip: ModelStore.PersistentModel, ModelStore.RelationshipContent, ModelStoreMacros._MacroModel {
                }
                """#
        )
    }

    @Test func relationshipsWithSwiftDataArgumentsAndAPublicClass() {
        assertExpansion(
            #"""
            @Model
            public final class Trip {
                @Relationship(deleteRule: .cascade, minimumModelCount: 0, maximumModelCount: 10, originalName: "things", inverse: \Item.trip, hashModifier: "x") var items: [Item] = []
                var destination: Destination?
                var tags: [String]

                public init() {
                    tags = []
                }
            }
            """#,
            expandedSource: #"""
                public final class Trip {
                    var items: [Item] {
                        @storageRestrictions(initializes: _items, accesses: _$relationshipsToLink)
                        init(initialValue) {
                            ModelStoreMacros._ModelStorageCheck.relationship([Item].self)
                            _items = ModelStore.Relationship<[Item]>(wrappedValue: initialValue, deleteRule: .cascade, minimumModelCount: 0, maximumModelCount: 10, originalName: "things", inverse: \Item.trip)
                            if !initialValue.relatedModels.isEmpty {
                                _$relationshipsToLink.append { model in
                                    model._items = ModelStore.Relationship<[Item]>(wrappedValue: .init(relatedModels: []), deleteRule: .cascade, minimumModelCount: 0, maximumModelCount: 10, originalName: "things", inverse: \Item.trip)
                                    model.items = initialValue
                                }
                            }
                        }
                        get {
                            ModelStore.Relationship<[Item]> [_enclosingInstance: self, wrapped: \.items, storage: \._items]
                        }
                        set {
                            ModelStore.Relationship<[Item]> [_enclosingInstance: self, wrapped: \.items, storage: \._items] = newValue
                        }
                    }

                    private final var _items: ModelStore.Relationship<[Item]>
                    var destination: Destination? {
                        @storageRestrictions(initializes: _destination, accesses: _$relationshipsToLink)
                        init(initialValue) {
                            _destination = Destination._ModelStoreStorage<Destination?>(wrappedValue: initialValue)
                            if ModelStoreMacros._InferredStorage.hasRelatedModels(initialValue) {
                                _$relationshipsToLink.append { model in
                                    model._destination = Destination._ModelStoreStorage<Destination?>(wrappedValue: ModelStoreMacros._InferredStorage.unlinked(initialValue))
                                    model.destination = initialValue
                                }
                            }
                        }
                        get {
                            Destination._ModelStoreStorage<Destination?> [_enclosingInstance: self, wrapped: \.destination, storage: \._destination]
                        }
                        set {
                            Destination._ModelStoreStorage<Destination?> [_enclosingInstance: self, wrapped: \.destination, storage: \._destination] = newValue
                        }
                    }

                    private final var _destination: Destination._ModelStoreStorage<Destination?>
                    var tags: [String] {
                        @storageRestrictions(initializes: _tags)
                        init(initialValue) {
                            ModelStoreMacros._ModelStorageCheck.attribute([String].self)
                            _tags = ModelStore.Attribute<[String]>(wrappedValue: initialValue)
                        }
                        get {
                            ModelStore.Attribute<[String]> [_enclosingInstance: self, wrapped: \.tags, storage: \._tags]
                        }
                        set {
                            ModelStore.Attribute<[String]> [_enclosingInstance: self, wrapped: \.tags, storage: \._tags] = newValue
                        }
                    }

                    private final var _tags: ModelStore.Attribute<[String]>

                    public init() {
                        tags = []
                    }

                    private let _$backingData = ModelStore.BackingData()

                    /// The framework's state for the model; reading it first links the relationships the
                    /// class's initializer set.
                    public var persistentBackingData: ModelStore.BackingData {
                        if !_$relationshipsToLink.isEmpty {
                            _$linkRelationships()
                        }
                        return _$backingData
                    }

                    /// What the class's initializers set in relationships, to link to the inverses.
                    private var _$relationshipsToLink: [(Trip) -> Void] = []

                    /// Sets the relationships an initializer set once more, through their setters, which
                    /// keep the inverse side of each related model in step.
                    private func _$linkRelationships() {
                        let links = _$relationshipsToLink
                        _$relationshipsToLink = []
                        for link in links {
                            link(self)
                        }
                    }

                    /// The storage of an unmarked optional or array of this model in a model: a relationship.
                    public typealias _ModelStoreStorage<Value: ModelStore.RelationshipValue> = ModelStore.Relationship<Value>
                }

                extension Trip: ModelStore.PersistentModel, ModelStore.RelationshipContent, ModelStoreMacros._MacroModel {
                }
                """#
        )
    }

    @Test func transientPropertiesAndUniqueAndIndexConstraints() {
        assertExpansion(
            #"""
            @Model
            final class Trip {
                #Unique<Trip>([\.name, \.start], [\.code])
                #Index<Trip>([\.start])
                var name: String
                var start: Date
                var code: Int
                @Transient var isExpanded = false
                @Transient var cache: [String: Int]
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
                    var start: Date {
                        @storageRestrictions(initializes: _start)
                        init(initialValue) {
                            ModelStoreMacros._ModelStorageCheck.attribute(Date.self)
                            _start = ModelStore.Attribute<Date>(wrappedValue: initialValue)
                        }
                        get {
                            ModelStore.Attribute<Date> [_enclosingInstance: self, wrapped: \.start, storage: \._start]
                        }
                        set {
                            ModelStore.Attribute<Date> [_enclosingInstance: self, wrapped: \.start, storage: \._start] = newValue
                        }
                    }

                    private final var _start: ModelStore.Attribute<Date>
                    var code: Int {
                        @storageRestrictions(initializes: _code)
                        init(initialValue) {
                            ModelStoreMacros._ModelStorageCheck.attribute(Int.self)
                            _code = ModelStore.Attribute<Int>(wrappedValue: initialValue)
                        }
                        get {
                            ModelStore.Attribute<Int> [_enclosingInstance: self, wrapped: \.code, storage: \._code]
                        }
                        set {
                            ModelStore.Attribute<Int> [_enclosingInstance: self, wrapped: \.code, storage: \._code] = newValue
                        }
                    }

                    private final var _code: ModelStore.Attribute<Int>
                    var isExpanded {
                        @storageRestrictions(initializes: _isExpanded)
                        init(initialValue) {
                            _isExpanded = ModelStore.Transient<Bool>(wrappedValue: initialValue)
                        }
                        get {
                            ModelStore.Transient<Bool> [_enclosingInstance: self, wrapped: \.isExpanded, storage: \._isExpanded]
                        }
                        set {
                            ModelStore.Transient<Bool> [_enclosingInstance: self, wrapped: \.isExpanded, storage: \._isExpanded] = newValue
                        }
                    }

                    private final var _isExpanded: ModelStore.Transient<Bool>
                    var cache: [String: Int] {
                        @storageRestrictions(initializes: _cache)
                        init(initialValue) {
                            _cache = ModelStore.Transient<[String: Int]>(wrappedValue: initialValue)
                        }
                        get {
                            ModelStore.Transient<[String: Int]> [_enclosingInstance: self, wrapped: \.cache, storage: \._cache]
                        }
                        set {
                            ModelStore.Transient<[String: Int]> [_enclosingInstance: self, wrapped: \.cache, storage: \._cache] = newValue
                        }
                    }

                    private final var _cache: ModelStore.Transient<[String: Int]>

                    let persistentBackingData = ModelStore.BackingData()

                    /// Creates a model for the framework to load stored values into; each property without an
                    /// initial value starts as a placeholder.
                    init() {
                        self.name = ""
                        self.start = Date(timeIntervalSinceReferenceDate: 0)
                        self.code = 0
                        self.cache = [:]
                    }

                    /// The model's compound uniqueness constraints and indexes, from its `#Unique` and `#Index`.
                    static var constraints: [ModelStore.ModelConstraint<Trip>] {
                        [.unique(\.name, \.start), .unique(\.code), .index(\.start)]
                    }

                    /// The storage of an unmarked optional or array of this model in a model: a relationship.
                    typealias _ModelStoreStorage<Value: ModelStore.RelationshipValue> = ModelStore.Relationship<Value>
                }

                extension Trip: ModelStore.PersistentModel, ModelStore.RelationshipContent, ModelStoreMacros._MacroModel {
                }
                """#
        )
    }

    @Test func observersAreCalledAroundTheStoreBySetter() {
        assertExpansion(
            #"""
            @Model
            final class Thermostat {
                var target: Double = 20 {
                    willSet { print(newValue) }
                    didSet(previous) {
                        guard previous != target else { return }
                        log(previous)
                    }
                }
                var room: String {
                    didSet { roomKey = room.lowercased() }
                }
                var roomKey = ""
                var limit = 0 {
                    didSet { if limit > 100 { self.limit = 100 } }
                }
                var zone: Zone? {
                    willSet(next) { print(next) }
                }
            }
            """#,
            // The test expander keeps the written observers beside the generated accessors; the
            // compiler drops them once an accessor macro makes the property computed.
            expandedSource: #"""
                final class Thermostat {
                    var target: Double {
                        willSet { print(newValue) }
                        didSet(previous) {
                            guard previous != target else { return }
                            log(previous)
                        }
                        @storageRestrictions(initializes: _target)
                        init(initialValue) {
                            ModelStoreMacros._ModelStorageCheck.attribute(Double.self)
                            _target = ModelStore.Attribute<Double>(wrappedValue: initialValue)
                        }

                        get {
                            ModelStore.Attribute<Double> [_enclosingInstance: self, wrapped: \.target, storage: \._target]
                        }

                        set {
                            func willSetObserver(_ newValue: Double) {
                                print(newValue)
                            }
                            func didSetObserver(_ previous: Double) {
                                var target: Double {
                                    get {
                                        ModelStore.Attribute<Double> [_enclosingInstance: self, wrapped: \.target, storage: \._target]
                                    }
                                    set {
                                        ModelStore.Attribute<Double> [_enclosingInstance: self, wrapped: \.target, storage: \._target] = newValue
                                    }
                                }
                                guard previous != target else {
                                    return
                                }
                                log(previous)
                            }
                            let oldValue = ModelStore.Attribute<Double> [_enclosingInstance: self, wrapped: \.target, storage: \._target]
                            willSetObserver(newValue)
                            ModelStore.Attribute<Double> [_enclosingInstance: self, wrapped: \.target, storage: \._target] = newValue
                            didSetObserver(oldValue)
                        }
                    }

                    private final var _target: ModelStore.Attribute<Double>
                    var room: String {
                        didSet { roomKey = room.lowercased() }
                        @storageRestrictions(initializes: _room)
                        init(initialValue) {
                            ModelStoreMacros._ModelStorageCheck.attribute(String.self)
                            _room = ModelStore.Attribute<String>(wrappedValue: initialValue)
                        }

                        get {
                            ModelStore.Attribute<String> [_enclosingInstance: self, wrapped: \.room, storage: \._room]
                        }

                        set {
                            func didSetObserver() {
                                var room: String {
                                    get {
                                        ModelStore.Attribute<String> [_enclosingInstance: self, wrapped: \.room, storage: \._room]
                                    }
                                    set {
                                        ModelStore.Attribute<String> [_enclosingInstance: self, wrapped: \.room, storage: \._room] = newValue
                                    }
                                }
                                roomKey = room.lowercased()
                            }
                            ModelStore.Attribute<String> [_enclosingInstance: self, wrapped: \.room, storage: \._room] = newValue
                            didSetObserver()
                        }
                    }

                    private final var _room: ModelStore.Attribute<String>
                    var roomKey {
                        @storageRestrictions(initializes: _roomKey)
                        init(initialValue) {
                            ModelStoreMacros._ModelStorageCheck.attribute(String.self)
                            _roomKey = ModelStore.Attribute<String>(wrappedValue: initialValue)
                        }
                        get {
                            ModelStore.Attribute<String> [_enclosingInstance: self, wrapped: \.roomKey, storage: \._roomKey]
                        }
                        set {
                            ModelStore.Attribute<String> [_enclosingInstance: self, wrapped: \.roomKey, storage: \._roomKey] = newValue
                        }
                    }

                    private final var _roomKey: ModelStore.Attribute<String>
                    var limit {
                        didSet { if limit > 100 { self.limit = 100 } }
                        @storageRestrictions(initializes: _limit)
                        init(initialValue) {
                            ModelStoreMacros._ModelStorageCheck.attribute(Int.self)
                            _limit = ModelStore.Attribute<Int>(wrappedValue: initialValue)
                        }

                        get {
                            ModelStore.Attribute<Int> [_enclosingInstance: self, wrapped: \.limit, storage: \._limit]
                        }

                        set {
                            func didSetObserver() {
                                var limit: Int {
                                    get {
                                        ModelStore.Attribute<Int> [_enclosingInstance: self, wrapped: \.limit, storage: \._limit]
                                    }
                                    set {
                                        ModelStore.Attribute<Int> [_enclosingInstance: self, wrapped: \.limit, storage: \._limit] = newValue
                                    }
                                }
                                if limit > 100 {
                                    limit = 100
                                }
                            }
                            ModelStore.Attribute<Int> [_enclosingInstance: self, wrapped: \.limit, storage: \._limit] = newValue
                            didSetObserver()
                        }
                    }

                    private final var _limit: ModelStore.Attribute<Int>
                    var zone: Zone? {
                        willSet(next) { print(next) }
                        @storageRestrictions(initializes: _zone, accesses: _$relationshipsToLink)
                        init(initialValue) {
                            _zone = Zone._ModelStoreStorage<Zone?>(wrappedValue: initialValue)
                            if ModelStoreMacros._InferredStorage.hasRelatedModels(initialValue) {
                                _$relationshipsToLink.append { model in
                                    model._zone = Zone._ModelStoreStorage<Zone?>(wrappedValue: ModelStoreMacros._InferredStorage.unlinked(initialValue))
                                    model.zone = initialValue
                                }
                            }
                        }

                        get {
                            Zone._ModelStoreStorage<Zone?> [_enclosingInstance: self, wrapped: \.zone, storage: \._zone]
                        }

                        set {
                            func willSetObserver(_ next: Zone?) {
                                print(next)
                            }
                            willSetObserver(newValue)
                            Zone._ModelStoreStorage<Zone?> [_enclosingInstance: self, wrapped: \.zone, storage: \._zone] = newValue
                        }
                    }

                    private final var _zone: Zone._ModelStoreStorage<Zone?>

                    private let _$backingData = ModelStore.BackingData()

                    /// The framework's state for the model; reading it first links the relationships the
                    /// class's initializer set.
                    var persistentBackingData: ModelStore.BackingData {
                        if !_$relationshipsToLink.isEmpty {
                            _$linkRelationships()
                        }
                        return _$backingData
                    }

                    /// What the class's initializers set in relationships, to link to the inverses.
                    private var _$relationshipsToLink: [(Thermostat) -> Void] = []

                    /// Sets the relationships an initializer set once more, through their setters, which
                    /// keep the inverse side of each related model in step.
                    private func _$linkRelationships() {
                        let links = _$relationshipsToLink
                        _$relationshipsToLink = []
                        for link in links {
                            link(self)
                        }
                    }

                    /// Creates a model for the framework to load stored values into; each property without an
                    /// initial value starts as a placeholder.
                    init() {
                        self.room = ""
                    }

                    /// The storage of an unmarked optional or array of this model in a model: a relationship.
                    typealias _ModelStoreStorage<Value: ModelStore.RelationshipValue> = ModelStore.Relationship<Value>
                }

                extension Thermostat: ModelStore.PersistentModel, ModelStore.RelationshipContent, ModelStoreMacros._MacroModel {
                }
                """#
        )
    }

    @Test func nestedValueTypesAreAttributesAndCollectionInitializersGiveTheType() {
        assertExpansion(
            #"""
            @Model
            final class Recipe {
                enum Course: String, Codable {
                    case starter, main
                }
                var course: Course?
                var tags = [String]()
                var ingredients = [Ingredient]()
            }
            """#,
            expandedSource: #"""
                final class Recipe {
                    enum Course: String, Codable {
                        case starter, main
                    }
                    var course: Course? {
                        @storageRestrictions(initializes: _course)
                        init(initialValue) {
                            ModelStoreMacros._ModelStorageCheck.attribute(Course?.self)
                            _course = ModelStore.Attribute<Course?>(wrappedValue: initialValue)
                        }
                        get {
                            ModelStore.Attribute<Course?> [_enclosingInstance: self, wrapped: \.course, storage: \._course]
                        }
                        set {
                            ModelStore.Attribute<Course?> [_enclosingInstance: self, wrapped: \.course, storage: \._course] = newValue
                        }
                    }

                    private final var _course: ModelStore.Attribute<Course?>
                    var tags {
                        @storageRestrictions(initializes: _tags)
                        init(initialValue) {
                            ModelStoreMacros._ModelStorageCheck.attribute([String].self)
                            _tags = ModelStore.Attribute<[String]>(wrappedValue: initialValue)
                        }
                        get {
                            ModelStore.Attribute<[String]> [_enclosingInstance: self, wrapped: \.tags, storage: \._tags]
                        }
                        set {
                            ModelStore.Attribute<[String]> [_enclosingInstance: self, wrapped: \.tags, storage: \._tags] = newValue
                        }
                    }

                    private final var _tags: ModelStore.Attribute<[String]>
                    var ingredients {
                        @storageRestrictions(initializes: _ingredients, accesses: _$relationshipsToLink)
                        init(initialValue) {
                            _ingredients = Ingredient._ModelStoreStorage<[Ingredient]>(wrappedValue: initialValue)
                            if ModelStoreMacros._InferredStorage.hasRelatedModels(initialValue) {
                                _$relationshipsToLink.append { model in
                                    model._ingredients = Ingredient._ModelStoreStorage<[Ingredient]>(wrappedValue: ModelStoreMacros._InferredStorage.unlinked(initialValue))
                                    model.ingredients = initialValue
                                }
                            }
                        }
                        get {
                            Ingredient._ModelStoreStorage<[Ingredient]> [_enclosingInstance: self, wrapped: \.ingredients, storage: \._ingredients]
                        }
                        set {
                            Ingredient._ModelStoreStorage<[Ingredient]> [_enclosingInstance: self, wrapped: \.ingredients, storage: \._ingredients] = newValue
                        }
                    }

                    private final var _ingredients: Ingredient._ModelStoreStorage<[Ingredient]>

                    private let _$backingData = ModelStore.BackingData()

                    /// The framework's state for the model; reading it first links the relationships the
                    /// class's initializer set.
                    var persistentBackingData: ModelStore.BackingData {
                        if !_$relationshipsToLink.isEmpty {
                            _$linkRelationships()
                        }
                        return _$backingData
                    }

                    /// What the class's initializers set in relationships, to link to the inverses.
                    private var _$relationshipsToLink: [(Recipe) -> Void] = []

                    /// Sets the relationships an initializer set once more, through their setters, which
                    /// keep the inverse side of each related model in step.
                    private func _$linkRelationships() {
                        let links = _$relationshipsToLink
                        _$relationshipsToLink = []
                        for link in links {
                            link(self)
                        }
                    }

                    /// Creates a model for the framework to load stored values into; each property without an
                    /// initial value starts as a placeholder.
                    init() {

                    }

                    /// The storage of an unmarked optional or array of this model in a model: a relationship.
                    typealias _ModelStoreStorage<Value: ModelStore.RelationshipValue> = ModelStore.Relationship<Value>
                }

                extension Recipe: ModelStore.PersistentModel, ModelStore.RelationshipContent, ModelStoreMacros._MacroModel {
                }
                """#
        )
    }

    @Test func modelActorGetsContainerContextAndInitializer() {
        assertExpansion(
            #"""
            @ModelActor
            actor Importer {
                func count() -> Int { 0 }
            }
            """#,
            expandedSource: #"""
                actor Importer {
                    func count() -> Int { 0 }

                    /// The executor that runs the actor's jobs and holds its context.
                    nonisolated let modelExecutor: any ModelStoreMacros.SerialModelExecutor

                    /// The container the actor's context uses.
                    nonisolated let modelContainer: ModelStore.ModelContainer

                    /// The actor's own context, used only on the actor.
                    var modelContext: ModelStore.ModelContext {
                        modelExecutor.modelContext
                    }

                    /// The actor runs on its model executor.
                    nonisolated var unownedExecutor: UnownedSerialExecutor {
                        modelExecutor.asUnownedSerialExecutor()
                    }

                    /// Creates the actor with a new context on `modelContainer`.
                    init(modelContainer: ModelStore.ModelContainer) {
                        let modelContext = ModelStore.ModelContext(modelContainer)
                        self.modelExecutor = ModelStoreMacros.DefaultSerialModelExecutor(modelContext: modelContext)
                        self.modelContainer = modelContainer
                    }
                }

                extension Importer: ModelStore.ModelActor {
                }
                """#
        )
    }

    @Test func aRootThatCanHaveSubclassesGetsARequiredInitAndTheSubclassHook() {
        assertExpansion(
            #"""
            @Model
            class Trip {
                var name: String
                init(name: String) {
                    self.name = name
                }
            }
            """#,
            expandedSource: #"""
                class Trip {
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
                    init(name: String) {
                        self.name = name
                    }

                    private let _$backingData = ModelStore.BackingData()

                    /// The framework's state for the model; reading it first links the relationships the
                    /// initializers of the class and of its subclasses set.
                    var persistentBackingData: ModelStore.BackingData {
                        if _$linksPending {
                            _$linkRelationships()
                        }
                        return _$backingData
                    }

                    /// Whether the relationships the initializers set are still to be linked.
                    private var _$linksPending = true

                    /// Sets the relationships the initializers set once more, through their setters, which keep
                    /// the inverse side of each related model in step: this class's, then each subclass's.
                    private func _$linkRelationships() {
                        _$linksPending = false
                        _$linkSubclassRelationships()
                    }

                    /// Links the relationships a subclass's initializers set; each `@Model` subclass with
                    /// relationships overrides it.
                    func _$linkSubclassRelationships() {
                    }

                    /// The list in which a subclass keeps the relationships its initializers set, for this class to link.
                    typealias _$RelationshipLinks<Model> = [(Model) -> Void]

                    /// Creates a model for the framework to load stored values into; each property without an
                    /// initial value starts as a placeholder.
                    required init() {
                        self.name = ""
                    }

                    /// The storage of an unmarked optional or array of this model in a model: a relationship.
                    typealias _ModelStoreStorage<Value: ModelStore.RelationshipValue> = ModelStore.Relationship<Value>
                }

                extension Trip: ModelStore.PersistentModel, ModelStore.RelationshipContent, ModelStoreMacros._MacroModel {
                }
                """#
        )
    }

    @Test func aSubclassGetsOnlyItsOwnStorageAndLinksItsRelationshipsThroughTheHook() {
        assertExpansion(
            #"""
            @Model
            class BusinessTrip: Trip {
                var perks: [String] = []
                var budget: Double
                var client: Client?
                init(name: String, budget: Double) {
                    self.budget = budget
                    super.init(name: name)
                }
            }
            """#,
            expandedSource: #"""
                class BusinessTrip: Trip {
                    var perks: [String] {
                        @storageRestrictions(initializes: _perks)
                        init(initialValue) {
                            ModelStoreMacros._ModelStorageCheck.attribute([String].self)
                            _perks = ModelStore.Attribute<[String]>(wrappedValue: initialValue)
                        }
                        get {
                            ModelStore.Attribute<[String]> [_enclosingInstance: self, wrapped: \.perks, storage: \._perks]
                        }
                        set {
                            ModelStore.Attribute<[String]> [_enclosingInstance: self, wrapped: \.perks, storage: \._perks] = newValue
                        }
                    }

                    private final var _perks: ModelStore.Attribute<[String]>
                    var budget: Double {
                        @storageRestrictions(initializes: _budget)
                        init(initialValue) {
                            ModelStoreMacros._ModelStorageCheck.attribute(Double.self)
                            _budget = ModelStore.Attribute<Double>(wrappedValue: initialValue)
                        }
                        get {
                            ModelStore.Attribute<Double> [_enclosingInstance: self, wrapped: \.budget, storage: \._budget]
                        }
                        set {
                            ModelStore.Attribute<Double> [_enclosingInstance: self, wrapped: \.budget, storage: \._budget] = newValue
                        }
                    }

                    private final var _budget: ModelStore.Attribute<Double>
                    var client: Client? {
                        @storageRestrictions(initializes: _client, accesses: _$relationshipsToLink)
                        init(initialValue) {
                            _client = Client._ModelStoreStorage<Client?>(wrappedValue: initialValue)
                            if ModelStoreMacros._InferredStorage.hasRelatedModels(initialValue) {
                                _$relationshipsToLink.append { model in
                                    model._client = Client._ModelStoreStorage<Client?>(wrappedValue: ModelStoreMacros._InferredStorage.unlinked(initialValue))
                                    model.client = initialValue
                                }
                            }
                        }
                        get {
                            Client._ModelStoreStorage<Client?> [_enclosingInstance: self, wrapped: \.client, storage: \._client]
                        }
                        set {
                            Client._ModelStoreStorage<Client?> [_enclosingInstance: self, wrapped: \.client, storage: \._client] = newValue
                        }
                    }

                    private final var _client: Client._ModelStoreStorage<Client?>
                    init(name: String, budget: Double) {
                        self.budget = budget
                        super.init(name: name)
                    }

                    /// What the class's initializers set in relationships, to link to the inverses.
                    private var _$relationshipsToLink = _$RelationshipLinks<BusinessTrip>()

                    /// Links the relationships this class's initializers set, after its superclasses' ones.
                    override func _$linkSubclassRelationships() {
                        super._$linkSubclassRelationships()
                        let links = _$relationshipsToLink
                        _$relationshipsToLink = []
                        for link in links {
                            link(self)
                        }
                    }

                    /// Creates a model for the framework to load stored values into; each property without an
                    /// initial value starts as a placeholder.
                    required init() {
                        self.budget = 0
                        super.init()
                    }
                }
                """#,
            inheritsModel: true
        )
    }

    @Test func aSubclassWithoutInitializersOrPlaceholdersInheritsItsSuperclasssInitializers() {
        assertExpansion(
            #"""
            @Model
            final class Excursion: Trip {
                var guide: String?
            }
            """#,
            expandedSource: #"""
                final class Excursion: Trip {
                    var guide: String? {
                        @storageRestrictions(initializes: _guide)
                        init(initialValue) {
                            ModelStoreMacros._ModelStorageCheck.attribute(String?.self)
                            _guide = ModelStore.Attribute<String?>(wrappedValue: initialValue)
                        }
                        get {
                            ModelStore.Attribute<String?> [_enclosingInstance: self, wrapped: \.guide, storage: \._guide]
                        }
                        set {
                            ModelStore.Attribute<String?> [_enclosingInstance: self, wrapped: \.guide, storage: \._guide] = newValue
                        }
                    }

                    private final var _guide: ModelStore.Attribute<String?>
                }
                """#,
            inheritsModel: true
        )
    }

    @Test func aSubclassOfAHandWrittenModelDeclaresTheListTypeThatStopsEarlyRelationships() {
        assertExpansion(
            #"""
            @Model
            class BusinessTrip: Trip {
                var client: Client?
                init(client: Client?) {
                    super.init()
                    self.client = client
                }
            }
            """#,
            expandedSource: #"""
                class BusinessTrip: Trip {
                    var client: Client? {
                        @storageRestrictions(initializes: _client, accesses: _$relationshipsToLink)
                        init(initialValue) {
                            _client = Client._ModelStoreStorage<Client?>(wrappedValue: initialValue)
                            if ModelStoreMacros._InferredStorage.hasRelatedModels(initialValue) {
                                _$relationshipsToLink.append { model in
                                    model._client = Client._ModelStoreStorage<Client?>(wrappedValue: ModelStoreMacros._InferredStorage.unlinked(initialValue))
                                    model.client = initialValue
                                }
                            }
                        }
                        get {
                            Client._ModelStoreStorage<Client?> [_enclosingInstance: self, wrapped: \.client, storage: \._client]
                        }
                        set {
                            Client._ModelStoreStorage<Client?> [_enclosingInstance: self, wrapped: \.client, storage: \._client] = newValue
                        }
                    }

                    private final var _client: Client._ModelStoreStorage<Client?>
                    init(client: Client?) {
                        defer {
                            _ = self.persistentBackingData
                        }
                        super.init()
                        self.client = client
                    }

                    /// The list in which a subclass keeps the relationships its initializers set: nothing links
                    /// them under a hand-written root class, so setting one before `super.init()` stops the program.
                    typealias _$RelationshipLinks<Model> = ModelStoreMacros._UnlinkedRelationships<Model>

                    /// The hook a `@Model` subclass overrides; a hand-written root never calls it.
                    func _$linkSubclassRelationships() {
                    }

                    /// What the class's initializers set in relationships, to link to the inverses.
                    private var _$relationshipsToLink = _$RelationshipLinks<BusinessTrip>()

                    /// Creates a model for the framework to load stored values into; each property without an
                    /// initial value starts as a placeholder.
                    required init() {
                        super.init()
                    }
                }

                extension BusinessTrip: ModelStoreMacros._MacroModel {
                }
                """#,
            inheritsHandWrittenModel: true)
    }

    @Test func aUniqueToOneRelationshipIsAConstraint() {
        assertExpansion(
            #"""
            @Model
            final class Member {
                @Relationship(.unique, deleteRule: .cascade) var badge: Badge?
            }
            """#,
            expandedSource: #"""
                final class Member {
                    var badge: Badge? {
                        @storageRestrictions(initializes: _badge, accesses: _$relationshipsToLink)
                        init(initialValue) {
                            ModelStoreMacros._ModelStorageCheck.relationship(Badge?.self)
                            _badge = ModelStore.Relationship<Badge?>(wrappedValue: initialValue, deleteRule: .cascade)
                            if !initialValue.relatedModels.isEmpty {
                                _$relationshipsToLink.append { model in
                                    model._badge = ModelStore.Relationship<Badge?>(wrappedValue: .init(relatedModels: []), deleteRule: .cascade)
                                    model.badge = initialValue
                                }
                            }
                        }
                        get {
                            ModelStore.Relationship<Badge?> [_enclosingInstance: self, wrapped: \.badge, storage: \._badge]
                        }
                        set {
                            ModelStore.Relationship<Badge?> [_enclosingInstance: self, wrapped: \.badge, storage: \._badge] = newValue
                        }
                    }

                    private final var _badge: ModelStore.Relationship<Badge?>

                    private let _$backingData = ModelStore.BackingData()

                    /// The framework's state for the model; reading it first links the relationships the
                    /// class's initializer set.
                    var persistentBackingData: ModelStore.BackingData {
                        if !_$relationshipsToLink.isEmpty {
                            _$linkRelationships()
                        }
                        return _$backingData
                    }

                    /// What the class's initializers set in relationships, to link to the inverses.
                    private var _$relationshipsToLink: [(Member) -> Void] = []

                    /// Sets the relationships an initializer set once more, through their setters, which
                    /// keep the inverse side of each related model in step.
                    private func _$linkRelationships() {
                        let links = _$relationshipsToLink
                        _$relationshipsToLink = []
                        for link in links {
                            link(self)
                        }
                    }

                    /// Creates a model for the framework to load stored values into; each property without an
                    /// initial value starts as a placeholder.
                    init() {

                    }

                    /// The model's compound uniqueness constraints and indexes, from its `#Unique` and `#Index`.
                    static var constraints: [ModelStore.ModelConstraint<Member>] {
                        [.unique(\.badge)]
                    }

                    /// The storage of an unmarked optional or array of this model in a model: a relationship.
                    typealias _ModelStoreStorage<Value: ModelStore.RelationshipValue> = ModelStore.Relationship<Value>
                }

                extension Member: ModelStore.PersistentModel, ModelStore.RelationshipContent, ModelStoreMacros._MacroModel {
                }
                """#)
    }

    @Test func anUnmarkedValueOfATopLevelTypeIsDecidedByTheCompiler() {
        assertExpansion(
            #"""
            @Model
            final class Outing {
                var stops: [Waypoint]
            }
            """#,
            expandedSource: #"""
                final class Outing {
                    var stops: [Waypoint] {
                        @storageRestrictions(initializes: _stops, accesses: _$relationshipsToLink)
                        init(initialValue) {
                            _stops = Waypoint._ModelStoreStorage<[Waypoint]>(wrappedValue: initialValue)
                            if ModelStoreMacros._InferredStorage.hasRelatedModels(initialValue) {
                                _$relationshipsToLink.append { model in
                                    model._stops = Waypoint._ModelStoreStorage<[Waypoint]>(wrappedValue: ModelStoreMacros._InferredStorage.unlinked(initialValue))
                                    model.stops = initialValue
                                }
                            }
                        }
                        get {
                            Waypoint._ModelStoreStorage<[Waypoint]> [_enclosingInstance: self, wrapped: \.stops, storage: \._stops]
                        }
                        set {
                            Waypoint._ModelStoreStorage<[Waypoint]> [_enclosingInstance: self, wrapped: \.stops, storage: \._stops] = newValue
                        }
                    }

                    private final var _stops: Waypoint._ModelStoreStorage<[Waypoint]>

                    private let _$backingData = ModelStore.BackingData()

                    /// The framework's state for the model; reading it first links the relationships the
                    /// class's initializer set.
                    var persistentBackingData: ModelStore.BackingData {
                        if !_$relationshipsToLink.isEmpty {
                            _$linkRelationships()
                        }
                        return _$backingData
                    }

                    /// What the class's initializers set in relationships, to link to the inverses.
                    private var _$relationshipsToLink: [(Outing) -> Void] = []

                    /// Sets the relationships an initializer set once more, through their setters, which
                    /// keep the inverse side of each related model in step.
                    private func _$linkRelationships() {
                        let links = _$relationshipsToLink
                        _$relationshipsToLink = []
                        for link in links {
                            link(self)
                        }
                    }

                    /// Creates a model for the framework to load stored values into; each property without an
                    /// initial value starts as a placeholder.
                    init() {
                        self.stops = []
                    }

                    /// The storage of an unmarked optional or array of this model in a model: a relationship.
                    typealias _ModelStoreStorage<Value: ModelStore.RelationshipValue> = ModelStore.Relationship<Value>
                }

                extension Outing: ModelStore.PersistentModel, ModelStore.RelationshipContent, ModelStoreMacros._MacroModel {
                }
                """#)
    }

    @Test func initializersThatCannotFailLinkTheRelationshipsTheySetAsTheyReturn() {
        assertExpansion(
            #"""
            @Model
            final class Student {
                var name: String
                var school: School?

                init(name: String, school: School?) {
                    self.name = name
                    self.school = school
                }

                init?(code: String) {
                    guard !code.isEmpty else { return nil }
                    self.name = code
                }

                init(checked name: String) throws {
                    self.name = name
                }

                convenience init(school: School) {
                    self.init(name: "new", school: school)
                }
            }
            """#,
            expandedSource: #"""
                final class Student {
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
                    var school: School? {
                        @storageRestrictions(initializes: _school, accesses: _$relationshipsToLink)
                        init(initialValue) {
                            _school = School._ModelStoreStorage<School?>(wrappedValue: initialValue)
                            if ModelStoreMacros._InferredStorage.hasRelatedModels(initialValue) {
                                _$relationshipsToLink.append { model in
                                    model._school = School._ModelStoreStorage<School?>(wrappedValue: ModelStoreMacros._InferredStorage.unlinked(initialValue))
                                    model.school = initialValue
                                }
                            }
                        }
                        get {
                            School._ModelStoreStorage<School?> [_enclosingInstance: self, wrapped: \.school, storage: \._school]
                        }
                        set {
                            School._ModelStoreStorage<School?> [_enclosingInstance: self, wrapped: \.school, storage: \._school] = newValue
                        }
                    }

                    private final var _school: School._ModelStoreStorage<School?>

                    init(name: String, school: School?) {
                        defer {
                            _ = self.persistentBackingData
                        }
                        self.name = name
                        self.school = school
                    }

                    init?(code: String) {
                        guard !code.isEmpty else { return nil }
                        self.name = code
                    }

                    init(checked name: String) throws {
                        self.name = name
                    }

                    convenience init(school: School) {
                        self.init(name: "new", school: school)
                    }

                    private let _$backingData = ModelStore.BackingData()

                    /// The framework's state for the model; reading it first links the relationships the
                    /// class's initializer set.
                    var persistentBackingData: ModelStore.BackingData {
                        if !_$relationshipsToLink.isEmpty {
                            _$linkRelationships()
                        }
                        return _$backingData
                    }

                    /// What the class's initializers set in relationships, to link to the inverses.
                    private var _$relationshipsToLink: [(Student) -> Void] = []

                    /// Sets the relationships an initializer set once more, through their setters, which
                    /// keep the inverse side of each related model in step.
                    private func _$linkRelationships() {
                        let links = _$relationshipsToLink
                        _$relationshipsToLink = []
                        for link in links {
                            link(self)
                        }
                    }

                    /// Creates a model for the framework to load stored values into; each property without an
                    /// initial value starts as a placeholder.
                    init() {
                        self.name = ""
                    }

                    /// The storage of an unmarked optional or array of this model in a model: a relationship.
                    typealias _ModelStoreStorage<Value: ModelStore.RelationshipValue> = ModelStore.Relationship<Value>
                }

                extension Student: ModelStore.PersistentModel, ModelStore.RelationshipContent, ModelStoreMacros._MacroModel {
                }
                """#)
    }

    @Test func aTransformedPropertyWithoutInitialValueHasOptionalStorage() {
        assertExpansion(
            #"""
            @Model
            final class Swatch {
                @Attribute(.transformable(by: HueTransformer.self), .preserveValueOnDeletion) var hue: Hue
                @Attribute(.transformable(by: HueTransformer.self)) var accent: Hue = Hue(0)

                init(hue: Hue) {
                    self.hue = hue
                }
            }
            """#,
            expandedSource: #"""
                final class Swatch {
                    var hue: Hue {
                        @storageRestrictions(initializes: _hue)
                        init(initialValue) {
                            ModelStoreMacros._ModelStorageCheck.attribute(Hue.self)
                            _hue = ModelStore.Attribute<Hue?>(_valueOrNone: initialValue, .transformable(by: HueTransformer.self), [.preserveValueOnDeletion])
                        }
                        get {
                            ModelStore.Attribute<Hue?> [_enclosingInstance: self, required: \.hue, storage: \._hue]
                        }
                        set {
                            ModelStore.Attribute<Hue?> [_enclosingInstance: self, required: \.hue, storage: \._hue] = newValue
                        }
                    }

                    private final var _hue: ModelStore.Attribute<Hue?>
                    var accent: Hue {
                        @storageRestrictions(initializes: _accent)
                        init(initialValue) {
                            ModelStoreMacros._ModelStorageCheck.attribute(Hue.self)
                            _accent = ModelStore.Attribute<Hue>(wrappedValue: initialValue, .transformable(by: HueTransformer.self))
                        }
                        get {
                            ModelStore.Attribute<Hue> [_enclosingInstance: self, wrapped: \.accent, storage: \._accent]
                        }
                        set {
                            ModelStore.Attribute<Hue> [_enclosingInstance: self, wrapped: \.accent, storage: \._accent] = newValue
                        }
                    }

                    private final var _accent: ModelStore.Attribute<Hue>

                    init(hue: Hue) {
                        self.hue = hue
                    }

                    let persistentBackingData = ModelStore.BackingData()

                    /// Creates a model for the framework to load stored values into; each property without an
                    /// initial value starts as a placeholder.
                    init() {
                        self._hue = ModelStore.Attribute<Hue?>(_valueOrNone: nil, .transformable(by: HueTransformer.self), [.preserveValueOnDeletion], keyPath: \Swatch.hue)
                    }

                    /// The storage of an unmarked optional or array of this model in a model: a relationship.
                    typealias _ModelStoreStorage<Value: ModelStore.RelationshipValue> = ModelStore.Relationship<Value>
                }

                extension Swatch: ModelStore.PersistentModel, ModelStore.RelationshipContent, ModelStoreMacros._MacroModel {
                }
                """#)
    }
}
