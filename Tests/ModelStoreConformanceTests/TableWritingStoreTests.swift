import Foundation
import ModelStore
import ModelStoreAdapterKit
import ModelStoreConformance
import Testing

/// The settings of a ``VaultStore``: the vault it keeps its table in.
struct VaultStoreConfiguration: DataStoreConfiguration {
    typealias Store = VaultStore
    var name = "vault"
    var schema: Schema?
    /// Where the store keeps what it commits.
    var vault: Vault
    /// The store's ``TableWritingStore/clearsDanglingReferences``.
    var clearsReferences = false

    static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.name == rhs.name && lhs.vault === rhs.vault && lhs.clearsReferences == rhs.clearsReferences
    }
    func hash(into hasher: inout Hasher) {
        hasher.combine(name)
        hasher.combine(ObjectIdentifier(vault))
        hasher.combine(clearsReferences)
    }
}

/// What a ``VaultStore`` has committed, standing in for a file: a store opened on it again reads
/// it, and it can be told to refuse its next write, as a full disk would.
final class Vault: @unchecked Sendable {
    // Safety: every stored property is read and written only while `lock` is held.
    private let lock = NSLock()
    private var kept: (table: SnapshotTable, history: StoreHistory)?
    private var refusals = 0
    private(set) var writes = 0
    private var reconciling:
        (
            @Sendable (DataStoreSaveChangesRequest<DefaultSnapshot>) throws -> DataStoreSaveChangesRequest<
                DefaultSnapshot
            >
        )?
    private(set) var reconciled = 0

    /// Makes the stores on this vault reconcile each save with `body` (``TableWritingStore/reconcile(_:with:)``).
    func reconcile(
        with body:
            @escaping @Sendable (DataStoreSaveChangesRequest<DefaultSnapshot>) throws ->
            DataStoreSaveChangesRequest<DefaultSnapshot>
    ) {
        lock.withLock { reconciling = body }
    }

    func reconcile(
        _ request: DataStoreSaveChangesRequest<DefaultSnapshot>
    ) throws -> DataStoreSaveChangesRequest<DefaultSnapshot> {
        guard
            let body = lock.withLock({
                () -> (
                    @Sendable (DataStoreSaveChangesRequest<DefaultSnapshot>) throws -> DataStoreSaveChangesRequest<
                        DefaultSnapshot
                    >
                )? in
                reconciled += 1
                return reconciling
            })
        else { return request }
        return try body(request)
    }

    /// Makes the next write throw.
    func refuseNextWrite() { lock.withLock { refusals += 1 } }

    func keep(_ table: SnapshotTable, _ history: StoreHistory) throws {
        try lock.withLock {
            if refusals > 0 {
                refusals -= 1
                throw DataStoreError(.io, "the vault refused the write", remedy: "Retry the save")
            }
            kept = (table, history)
            writes += 1
        }
    }

    func load() -> (table: SnapshotTable, history: StoreHistory)? { lock.withLock { kept } }
}

/// A store written as an adapter author would, against the kit's public API only: the
/// ``TableWritingStore`` defaults over a persistence hook that writes a changed copy of the table
/// to a ``Vault`` and publishes it only once the vault has it.
final class VaultStore: TableWritingStore {
    typealias Snapshot = DefaultSnapshot
    let identifier: String
    let schema: Schema
    let configuration: VaultStoreConfiguration
    private let current: LockedValue<(table: SnapshotTable, history: StoreHistory)>
    private let writer = NSLock()

    init(_ configuration: VaultStoreConfiguration, migrationPlan: (any SchemaMigrationPlan.Type)?) throws {
        guard let schema = configuration.schema else {
            throw DataStoreError(.invalidConfiguration, "the vault store has no schema", remedy: "Set a schema")
        }
        self.configuration = configuration
        self.schema = schema
        self.identifier = "vault-" + configuration.name
        current = LockedValue(configuration.vault.load() ?? (SnapshotTable(schema: schema), StoreHistory(limit: 1_000)))
    }

    func readTable<Result>(_ body: (SnapshotTable) throws -> Result) rethrows -> Result {
        try current.withLock { try body($0.table) }
    }

    func readHistory<Result>(_ body: (StoreHistory) throws -> Result) rethrows -> Result {
        try current.withLock { try body($0.history) }
    }

    var clearsDanglingReferences: Bool { configuration.clearsReferences }

    func reconcile(
        _ request: DataStoreSaveChangesRequest<DefaultSnapshot>, with table: SnapshotTable
    ) throws -> DataStoreSaveChangesRequest<DefaultSnapshot> {
        try configuration.vault.reconcile(request)
    }

    func writeTable<Result>(
        _ change: (inout SnapshotTable, inout StoreHistory) throws -> (result: Result, changed: Bool)
    ) throws -> Result {
        try writer.withLock {
            var (table, history) = current.withLock { $0 }
            let (result, changed) = try change(&table, &history)
            guard changed else { return result }
            try configuration.vault.keep(table, history)
            current.withLock { $0 = (table, history) }
            return result
        }
    }
}

extension ConformanceAdapter {
    /// A store built on the kit's table protocols with nothing but its persistence hook.
    static let vault = ConformanceAdapter(name: "VaultStore", capabilities: [.erase]) { _ in
        VaultStoreConfiguration(vault: Vault())
    }

    /// The same store, keeping references to missing models out (``TableWritingStore/clearsDanglingReferences``).
    static let vaultClearingReferences = ConformanceAdapter(
        name: "VaultStore clearing references", capabilities: [.erase]
    ) { _ in
        VaultStoreConfiguration(vault: Vault(), clearsReferences: true)
    }
}

/// The kit's ``TableWritingStore`` defaults, on a store that supplies only the persistence hook.
struct TableWritingStoreTests {
    @Test(arguments: ConformanceSuite.cases(for: .vault))
    func conformance(_ testCase: ConformanceCase) throws {
        try run(testCase)
    }

    @Test(arguments: ConformanceSuite.cases(for: .vaultClearingReferences))
    func conformanceClearingReferences(_ testCase: ConformanceCase) throws {
        try run(testCase)
    }

    private func run(_ testCase: ConformanceCase) throws {
        switch try testCase.run() {
        case .passed: break
        case .skipped(let reason): try Test.cancel(Comment(rawValue: reason))
        case .expectedFailure(let reason, let failure): withKnownIssue(Comment(rawValue: reason)) { throw failure }
        }
    }

    final class Note: PersistentModel {
        @Attribute var title: String = ""
        @Attribute var words: Int = 0

        let persistentBackingData = BackingData()
        init() {}

        convenience init(title: String, words: Int) {
            self.init()
            self.title = title
            self.words = words
        }
    }

    private func container(_ vault: Vault) throws -> ModelContainer {
        try ModelContainer(for: Schema([Note.self]), configurations: [VaultStoreConfiguration(vault: vault)])
    }

    private func titles(_ context: ModelContext) throws -> [String] {
        try context.fetch(FetchDescriptor<Note>(sortBy: [SortDescriptor(\.title)])).map(\.title)
    }

    @Test func aRefusedWriteLeavesTheTableAndHistoryAsTheyWere() throws {
        let vault = Vault()
        let container = try container(vault)
        let context = ModelContext(container)
        context.insert(Note(title: "a", words: 1))
        try context.save()
        let historyBefore = try context.fetchHistory(HistoryDescriptor<DefaultHistoryTransaction>()).count

        vault.refuseNextWrite()
        context.insert(Note(title: "b", words: 2))
        #expect(throws: DataStoreError.self) { try context.save() }
        vault.refuseNextWrite()
        #expect(throws: DataStoreError.self) { try context.delete(model: Note.self) }

        let fresh = ModelContext(container)
        #expect(try titles(fresh) == ["a"])
        #expect(try fresh.fetchHistory(HistoryDescriptor<DefaultHistoryTransaction>()).count == historyBefore)
        #expect(vault.writes == 1)

        // The next write goes through, and a store opened on the vault again reads what it kept.
        fresh.insert(Note(title: "c", words: 3))
        try fresh.save()
        #expect(try titles(ModelContext(try self.container(vault))) == ["a", "c"])
    }

    @Test func aWriteThatChangesNothingIsNotKept() throws {
        let vault = Vault()
        let context = ModelContext(try container(vault))
        context.insert(Note(title: "a", words: 1))
        try context.save()
        try context.delete(model: Note.self, where: #Predicate { $0.words > 10 })
        try context.save()
        #expect(vault.writes == 1)
    }
}

/// The kit's hooks for a store that shares what it keeps: ``TableWritingStore/clearsDanglingReferences``
/// and ``TableWritingStore/reconcile(_:with:)``, run by the default writes.
struct TableWritingStoreHookTests {
    final class Tag: PersistentModel {
        @Attribute var name: String = ""
        let persistentBackingData = BackingData()
        init() {}
    }

    final class Link: PersistentModel {
        @Attribute var label: String = ""
        @Relationship var tag: Tag?
        @Relationship var next: Link?
        let persistentBackingData = BackingData()
        init() {}
    }

    private static let schema = Schema([Tag.self, Link.self])

    private func store(_ vault: Vault, clears: Bool) throws -> VaultStore {
        try VaultStore(
            VaultStoreConfiguration(schema: Self.schema, vault: vault, clearsReferences: clears), migrationPlan: nil)
    }

    private func new(_ entity: String, _ values: [String: StoreValue]) throws -> DefaultSnapshot {
        try DefaultSnapshot(
            persistentIdentifier: .temporary(entityName: entity), entity: Self.schema.entity(named: entity)!,
            namedValues: values)
    }

    /// Saves `snapshots` as new models; returns their identifiers in order.
    private func insert(_ store: VaultStore, _ snapshots: [DefaultSnapshot]) throws -> [PersistentIdentifier] {
        let result = try store.save(
            DataStoreSaveChangesRequest(editingState: EditingState(), inserted: snapshots, updated: [], deleted: []))
        return snapshots.map { result.remappedIdentifiers[$0.persistentIdentifier]! }
    }

    /// The value the vault keeps for `name` of model `id`.
    private func kept(_ vault: Vault, _ id: PersistentIdentifier, _ name: String) -> StoreValue? {
        vault.load()?.table.snapshot(for: id)?[name]
    }

    /// The number of changes of the newest transaction in the kept history.
    private func lastChangeCount(_ vault: Vault) -> Int? { vault.load()?.history.records.last?.changes.count }

    @Test(arguments: [false, true])
    func aSaveThatDeletesAReferencedModelClearsTheReferenceWhenTheStoreSaysSo(clears: Bool) throws {
        let vault = Vault()
        let store = try store(vault, clears: clears)
        let tag = try insert(store, [try new("Tag", ["name": .string("t")])])[0]
        let link = try insert(store, [try new("Link", ["label": .string("l"), "tag": .reference(tag)])])[0]
        let doomed = try #require(store.readTable { $0.snapshot(for: tag) })
        let result = try store.save(
            DataStoreSaveChangesRequest(editingState: EditingState(), inserted: [], updated: [], deleted: [doomed]))
        #expect(result.snapshotsToReregister[link]?["tag"] == (clears ? .null : nil))
        #expect(kept(vault, link, "tag") == (clears ? .null : .reference(tag)))
        // The repaired model is an update of the same transaction.
        #expect(lastChangeCount(vault) == (clears ? 2 : 1))
    }

    @Test(arguments: [false, true])
    func batchDeletesClearTheReferencesTheyLeaveWhenTheStoreSaysSo(clears: Bool) throws {
        let vault = Vault()
        let store = try store(vault, clears: clears)
        let tags = try insert(store, [try new("Tag", ["name": .string("a")]), try new("Tag", ["name": .string("b")])])
        let links = try insert(
            store,
            [
                try new("Link", ["label": .string("a"), "tag": .reference(tags[0])]),
                try new("Link", ["label": .string("b"), "tag": .reference(tags[1])]),
            ])
        try store.delete(DataStoreBatchDeleteRequest<Tag>(identifiers: [tags[0]], editingState: EditingState()))
        #expect(kept(vault, links[0], "tag") == (clears ? .null : .reference(tags[0])))
        #expect(kept(vault, links[1], "tag") == .reference(tags[1]))
        #expect(lastChangeCount(vault) == (clears ? 2 : 1))

        let deleted = try store.deleteEveryModel(DataStoreDeleteEveryModelRequest<Tag>(editingState: EditingState()))
        #expect(Array(deleted) == [tags[1]])
        #expect(kept(vault, links[1], "tag") == (clears ? .null : .reference(tags[1])))
        #expect(lastChangeCount(vault) == (clears ? 2 : 1))
    }

    @Test(arguments: [false, true])
    func updatesAndBatchInsertsDropReferencesToMissingModelsWhenTheStoreSaysSo(clears: Bool) throws {
        let vault = Vault()
        let store = try store(vault, clears: clears)
        let gone = try insert(store, [try new("Tag", ["name": .string("gone")])])[0]
        try store.delete(DataStoreBatchDeleteRequest<Tag>(identifiers: [gone], editingState: EditingState()))
        let link = try insert(store, [try new("Link", ["label": .string("l")])])[0]
        let slot = try #require(Self.schema.entity(named: "Link")?.slot(of: "tag"))
        try store.update(
            DataStoreBatchUpdateRequest<Link>(
                identifiers: [link], values: [slot: .reference(gone)], editingState: EditingState()))
        #expect(kept(vault, link, "tag") == (clears ? .null : .reference(gone)))

        let inserted = try store.insert(
            DataStoreBatchInsertRequest(
                snapshots: [try new("Link", ["label": .string("m"), "tag": .reference(gone)])],
                editingState: EditingState()))
        #expect(kept(vault, inserted[0], "tag") == (clears ? .null : .reference(gone)))
    }

    @Test func aReferenceToAModelTheSaveDoesNotInsertIsRefusedAndChangesNothing() throws {
        let vault = Vault()
        let store = try store(vault, clears: true)
        _ = try insert(store, [try new("Tag", ["name": .string("t")])])
        let writes = vault.writes
        let orphan = PersistentIdentifier.temporary(entityName: "Tag")
        let saves: [() throws -> Void] = [
            { _ = try self.insert(store, [try self.new("Link", ["label": .string("x"), "tag": .reference(orphan)])]) },
            {
                _ = try store.insert(
                    DataStoreBatchInsertRequest(
                        snapshots: [try self.new("Link", ["label": .string("x"), "tag": .reference(orphan)])],
                        editingState: EditingState()))
            },
        ]
        for save in saves {
            #expect {
                try save()
            } throws: { error in
                let error = error as? DataStoreError
                return error?.code == .notFound && error?.message.contains("the save does not insert") == true
            }
            #expect(try store.readTable { try $0.fetchCount(StoreQuery(entityName: "Link")) } == 0)
            #expect(vault.writes == writes)
        }
    }

    @Test func aSaveIsPreparedFromWhatReconcileReturns() throws {
        let vault = Vault()
        let store = try store(vault, clears: false)
        let tags = try insert(store, [try new("Tag", ["name": .string("a")]), try new("Tag", ["name": .string("b")])])
        let doomed = try store.readTable { table in try tags.map { try #require(table.snapshot(for: $0)) } }
        let delete = DataStoreSaveChangesRequest(
            editingState: EditingState(), inserted: [], updated: [], deleted: doomed)

        // A reconcile that refuses stops the save before anything changes.
        vault.reconcile { _ in throw DataStoreError(.conflict, "changed elsewhere", remedy: "Fetch again") }
        let (writes, reconciled) = (vault.writes, vault.reconciled)
        #expect { try store.save(delete) } throws: { ($0 as? DataStoreError)?.code == .conflict }
        #expect(vault.writes == writes)
        #expect(vault.reconciled == reconciled + 1)

        // The save prepared is the one reconcile returns: here, without the deletion of the first tag.
        vault.reconcile { request in
            var request = request
            request.deleted.removeAll { $0.persistentIdentifier == tags[0] }
            return request
        }
        _ = try store.save(delete)
        #expect(kept(vault, tags[0], "name") == .string("a"))
        #expect(kept(vault, tags[1], "name") == nil)
    }
}
