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

    static func == (lhs: Self, rhs: Self) -> Bool { lhs.name == rhs.name && lhs.vault === rhs.vault }
    func hash(into hasher: inout Hasher) {
        hasher.combine(name)
        hasher.combine(ObjectIdentifier(vault))
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
}

/// The kit's ``TableWritingStore`` defaults, on a store that supplies only the persistence hook.
struct TableWritingStoreTests {
    @Test(arguments: ConformanceSuite.cases(for: .vault))
    func conformance(_ testCase: ConformanceCase) throws {
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
