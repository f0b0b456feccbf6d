import Foundation
import ModelStore

/// What a case body works with: the adapter, the case's temporary directory, and checks that
/// throw ``ConformanceFailure``.
final class CaseEnvironment {
    let caseID: String
    let adapter: ConformanceAdapter
    /// The capabilities the case runs with: read from the store's type, or declared by the adapter
    /// (``ConformanceCase/capabilities``). Cases read these, never the adapter's declarations.
    let capabilities: ConformanceCapabilities
    /// The case's own temporary directory; every store of the case lives in a subdirectory.
    let directory: URL
    var schema: Schema { Fixtures.schema }
    /// Contexts handed out by ``freshContext(_:)``, kept alive for the case: a model whose context
    /// is gone cannot load its relationships.
    private var contexts: [ModelContext] = []

    init(caseID: String, adapter: ConformanceAdapter, capabilities: ConformanceCapabilities, directory: URL) {
        self.caseID = caseID
        self.adapter = adapter
        self.capabilities = capabilities
        self.directory = directory
    }

    // MARK: Opening stores

    /// The directory of the store named `name` (created on first use).
    func storeDirectory(_ name: String = "store") throws -> URL {
        let url = directory.appendingPathComponent(name, isDirectory: true)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    /// The adapter's configuration for the store named `name`; the same name reopens the same store.
    func configuration(_ name: String = "store") throws -> any DataStoreConfiguration {
        let url = try storeDirectory(name)
        return try step("creating the adapter's configuration") { try adapter.makeConfiguration(url) }
    }

    /// A container on the fixture schema, on the adapter's store named `name`.
    func openContainer(_ name: String = "store") throws -> ModelContainer {
        try openContainer(configuration: try configuration(name))
    }

    /// A container on the fixture schema, on a given configuration.
    ///
    /// Its contexts refuse duplicate unique values (``DuplicateInsertPolicy/error``) rather than
    /// upsert, so the cases see whether the store itself enforces uniqueness;
    /// `uniqueness.upsertFindsTheStoredModel` checks the upsert.
    func openContainer(
        configuration: any DataStoreConfiguration, what: String = "opening a container"
    ) throws -> ModelContainer {
        try step(what) {
            let container = try ModelContainer(for: Fixtures.schema, configurations: [configuration])
            container.duplicateInsertPolicy = .error
            return container
        }
    }

    /// A container on the class-hierarchy schema (``Fixtures/hierarchySchema``), on the adapter's
    /// store named `name`, refusing duplicate unique values as ``openContainer(_:)``'s do.
    func openHierarchyContainer(_ name: String = "store") throws -> ModelContainer {
        let configuration = try configuration(name)
        return try step("opening a container on the class-hierarchy schema") {
            let container = try ModelContainer(for: Fixtures.hierarchySchema, configurations: [configuration])
            container.duplicateInsertPolicy = .error
            return container
        }
    }

    /// The adapter's store named `name`, opened directly with the fixture schema (no container).
    func openStore(_ name: String = "store") throws -> any DataStore {
        let configuration = try configuration(name)
        func open<C: DataStoreConfiguration>(_ configuration: C) throws -> any DataStore {
            var configuration = configuration
            if configuration.schema == nil { configuration.schema = Fixtures.schema }
            return try C.Store(configuration, migrationPlan: nil)
        }
        return try step("opening the store directly") { try open(configuration) }
    }

    /// A container whose store is the adapter's, wrapped so that it refuses every predicate and
    /// sort: every fetch goes through the context's in-memory fallback.
    func openFallbackContainer(_ name: String = "fallback") throws -> ModelContainer {
        let configuration = try configuration(name)
        func wrap<C: DataStoreConfiguration>(_ configuration: C) -> any DataStoreConfiguration {
            FallbackConfiguration(inner: configuration)
        }
        return try openContainer(
            configuration: wrap(configuration), what: "opening the adapter behind the fallback wrapper")
    }

    /// A container whose store is the adapter's, wrapped to record what it refuses.
    func openSpyContainer(_ name: String = "spy", log: SpyLog) throws -> ModelContainer {
        let configuration = try configuration(name)
        func wrap<C: DataStoreConfiguration>(_ configuration: C) -> any DataStoreConfiguration {
            SpyConfiguration(inner: configuration, log: log)
        }
        return try openContainer(configuration: wrap(configuration), what: "opening the adapter behind the spy wrapper")
    }

    /// A container on the suite's reference store.
    func openReferenceContainer() throws -> ModelContainer {
        try openContainer(configuration: ReferenceStoreConfiguration(), what: "opening the reference store")
    }

    /// A new context on a container with the standard seed inserted and saved; returns the seed.
    @discardableResult
    func seed(_ container: ModelContainer) throws -> Seed {
        let seed = Seed.make()
        let context = freshContext(container)
        seed.insert(into: context)
        do {
            try context.save()
        } catch let error as DataStoreError where error.code == .uniqueConstraintViolation {
            var failure = failure(
                "saving the seed data (\(seed.summary)) was refused as a unique-constraint violation, but its unique "
                    + "values differ: some only in case ('North' and 'north'). Unique values MUST compare as Swift's "
                    + "== does (case-sensitive)")
            failure.underlyingError = error
            throw failure
        } catch {
            try step("saving the seed data (\(seed.summary))") { throw error }
        }
        return seed
    }

    // MARK: Checks

    /// A failure with a message in a user's words.
    func failure(
        _ message: String, expected: String? = nil, found: String? = nil, file: String = #fileID, line: Int = #line
    ) -> ConformanceFailure {
        ConformanceFailure(caseID: caseID, message: message, expected: expected, found: found, file: file, line: line)
    }

    /// Fails with `message` unless `condition` holds.
    func check(
        _ condition: Bool, _ message: @autoclosure () -> String, expected: @autoclosure () -> String? = nil,
        found: @autoclosure () -> String? = nil, file: String = #fileID, line: Int = #line
    ) throws {
        guard !condition else { return }
        throw failure(message(), expected: expected(), found: found(), file: file, line: line)
    }

    /// Fails with `message` unless `found == expected`, showing both.
    func checkEqual<Value: Equatable>(
        _ found: Value, _ expected: Value, _ message: @autoclosure () -> String, file: String = #fileID,
        line: Int = #line
    ) throws {
        guard found != expected else { return }
        throw failure(message(), expected: render(expected), found: render(found), file: file, line: line)
    }

    /// The value, or a failure with `message` if it is `nil`.
    func require<Value>(
        _ value: Value?, _ message: @autoclosure () -> String, file: String = #fileID, line: Int = #line
    ) throws -> Value {
        guard let value else { throw failure(message(), file: file, line: line) }
        return value
    }

    /// Runs a step that must not throw; an error becomes a failure saying which step threw.
    @discardableResult
    func step<Result>(
        _ what: @autoclosure () -> String, file: String = #fileID, line: Int = #line, _ body: () throws -> Result
    ) throws -> Result {
        do {
            return try body()
        } catch let failure as ConformanceFailure {
            throw failure
        } catch let error as DataStoreError {
            let refusal =
                error.code == .preferInMemoryFilter || error.code == .preferInMemorySort
                ? ": the store refused a predicate or sort the context pushed because the store's queryCapabilities "
                    + "declare it (declare only what the store runs)" : ""
            var failure = failure("\(what()) threw an error\(refusal)", file: file, line: line)
            failure.underlyingError = error
            throw failure
        } catch {
            var failure = failure(
                "\(what()) threw an error that is not a DataStoreError (adapters MUST throw DataStoreError)",
                file: file, line: line)
            failure.underlyingError = ErrorDescription(error)
            throw failure
        }
    }

    /// Runs a step that must throw a `DataStoreError` with one of `codes`; returns the error.
    @discardableResult
    func expectError(
        _ codes: [DataStoreError.Code], _ what: @autoclosure () -> String, ifItSucceeds symptom: String? = nil,
        file: String = #fileID, line: Int = #line, _ body: () throws -> Void
    ) throws -> DataStoreError {
        let expected = codes.map { "DataStoreError.\($0)" }.joined(separator: " or ")
        do {
            try body()
        } catch let error as DataStoreError {
            return try matching(error)
        } catch let failure as ConformanceFailure {
            // A step inside the body wrapped the adapter's error: judge the error itself.
            guard let error = failure.underlyingError as? DataStoreError else { throw failure }
            return try matching(error)
        } catch {
            var failure = failure(
                "\(what()) threw an error that is not a DataStoreError", expected: expected,
                found: "\(type(of: error))", file: file, line: line)
            failure.underlyingError = ErrorDescription(error)
            throw failure
        }
        throw failure(symptom ?? "\(what()) succeeded", expected: expected, found: "no error", file: file, line: line)

        func matching(_ error: DataStoreError) throws -> DataStoreError {
            if codes.contains(error.code) { return error }
            var failure = failure(
                "\(what()) threw the wrong error", expected: expected, found: "DataStoreError.\(error.code)",
                file: file, line: line)
            failure.underlyingError = error
            throw failure
        }
    }

    /// The value at `index`, or a failure saying what was missing: a store returning too few items
    /// fails the case instead of trapping the test process.
    func element<Value>(
        _ items: [Value], _ index: Int, _ what: @autoclosure () -> String, file: String = #fileID, line: Int = #line
    ) throws -> Value {
        guard items.indices.contains(index) else {
            throw failure(
                "\(what()): expected at least \(index + 1) item(s), the store returned \(items.count)",
                file: file, line: line)
        }
        return items[index]
    }

    /// Items keyed by a value that MUST be unique among them, failing (never trapping) when the store
    /// returned two items with the same key.
    func index<Item, Key: Hashable>(
        _ items: [Item], by key: (Item) throws -> Key, _ what: @autoclosure () -> String, file: String = #fileID,
        line: Int = #line
    ) throws -> [Key: Item] {
        var indexed: [Key: Item] = [:]
        for item in items {
            let value = try key(item)
            if indexed.updateValue(item, forKey: value) != nil {
                throw failure(
                    "\(what()): the store returned two items with \(render(value)): a model was stored twice, "
                        + "or a fetch returned it twice", file: file, line: line)
            }
        }
        return indexed
    }

    // MARK: Reading what the store keeps

    /// The store behind a container: what store-level checks read, bypassing the context (which reads
    /// a reference to a missing model as `nil`, hiding what the store really keeps).
    func store(of container: ModelContainer) throws -> any DataStore {
        try require(container.stores.first, "the container has no store")
    }

    /// Every snapshot of an entity as the container's store keeps it, fetched directly.
    func storedSnapshots<T: PersistentModel>(_ type: T.Type, in container: ModelContainer) throws -> [DefaultSnapshot] {
        func fetch<S: DataStore>(_ store: S) throws -> [DefaultSnapshot] {
            try StoreDriver(store, self).fetchAll(T.self)
        }
        return try fetch(try store(of: container))
    }

    // MARK: Reading back

    /// A new context on a container that lives as long as the case.
    func freshContext(_ container: ModelContainer) -> ModelContext {
        let context = ModelContext(container)
        contexts.append(context)
        return context
    }

    /// Lets go of every context handed out, so their containers can close.
    func releaseContexts() { contexts.removeAll() }

    /// Opens a container on the adapter's store named `name`, runs `body`, then lets go of the
    /// container and every context opened on it, so the store closes. `body` must return values
    /// only, never models.
    @discardableResult
    func session<Result>(_ name: String = "store", _ body: (ModelContainer) throws -> Result) throws -> Result {
        let container = try openContainer(name)
        defer { releaseContexts() }
        return try body(container)
    }

    /// Every model of a type, read in a fresh context, keyed by its identifier (failing on duplicates).
    func byIdentifier<T: PersistentModel>(_ type: T.Type, in container: ModelContainer) throws
        -> [PersistentIdentifier: T]
    {
        let context = freshContext(container)
        let models = try step("fetching every '\(Schema.entityName(for: T.self))' in a fresh context") {
            try context.fetch(FetchDescriptor<T>())
        }
        return try index(
            models, by: \.persistentModelID, "fetching every '\(Schema.entityName(for: T.self))' by identifier")
    }

    /// Every model of a type, read in a fresh context, sorted by `key`.
    func all<T: PersistentModel>(_ type: T.Type, in container: ModelContainer, by key: KeyPath<T, String>) throws -> [T]
    {
        let context = freshContext(container)
        let models = try step("fetching every '\(Schema.entityName(for: T.self))' in a fresh context") {
            try context.fetch(FetchDescriptor<T>())
        }
        return models.sorted { $0[keyPath: key] < $1[keyPath: key] }
    }

    /// The seeded model whose `key` is `value`, fetched in `context`.
    func fetchSeeded<T: PersistentModel, Key: Equatable>(
        _ key: KeyPath<T, Key>, _ value: Key, in context: ModelContext
    ) throws -> T {
        let name = Schema.entityName(for: T.self)
        let models = try step("fetching every '\(name)'") { try context.fetch(FetchDescriptor<T>()) }
        return try require(
            models.first { $0[keyPath: key] == value }, "the seeded '\(name)' \(render(value)) is missing")
    }

    /// How many models of a type a fresh context fetches.
    func count<T: PersistentModel>(_ type: T.Type, in container: ModelContainer) throws -> Int {
        let context = freshContext(container)
        return try step("fetching every '\(Schema.entityName(for: T.self))' in a fresh context") {
            try context.fetch(FetchDescriptor<T>()).count
        }
    }

    /// The specimen codes of a fresh fetch, in fetch order.
    func codes(_ descriptor: FetchDescriptor<Specimen>, in container: ModelContainer, _ what: String) throws -> [String]
    {
        let context = freshContext(container)
        return try step(what) { try context.fetch(descriptor).map(\.code) }
    }
}

/// A short rendering of a value for failure messages.
func render<Value>(_ value: Value) -> String {
    if let strings = value as? [String] { return "[" + strings.map { "\"\($0)\"" }.joined(separator: ", ") + "]" }
    if let string = value as? String { return "\"\(string)\"" }
    return String(describing: value)
}
