import Foundation
import ModelStore
import ModelStoreAdapterKit
import ModelStoreConformance
import Testing

/// The settings of a ``LedgerStore``: the ledger it keeps its changes in.
struct LedgerStoreConfiguration: DataStoreConfiguration {
    typealias Store = LedgerStore
    var name = "ledger"
    var schema: Schema?
    /// Where the store keeps the changes it commits.
    var ledger: Ledger

    static func == (lhs: Self, rhs: Self) -> Bool { lhs.name == rhs.name && lhs.ledger === rhs.ledger }
    func hash(into hasher: inout Hasher) {
        hasher.combine(name)
        hasher.combine(ObjectIdentifier(ledger))
    }
}

/// The changes a ``LedgerStore`` has committed, standing in for a log file: a store opened on it
/// again replays them, and it can be told to refuse its next write, as a full disk would.
final class Ledger: @unchecked Sendable {
    /// One kept change: the rows it wrote whole, the values it changed, and what it deleted.
    enum Entry {
        case rows(
            written: [(id: PersistentIdentifier, values: [StoreValue])],
            changed: [(id: PersistentIdentifier, slot: Int, value: StoreValue)], deleted: [PersistentIdentifier],
            nextKey: Int64)
        case cleared(entity: String)
    }

    // Safety: every stored property is read and written only while `lock` is held.
    private let lock = NSLock()
    private var kept: [Entry] = []
    private var refusals = 0

    /// Makes the next write throw.
    func refuseNextWrite() { lock.withLock { refusals += 1 } }

    func append(_ entry: Entry) throws {
        try lock.withLock {
            if refusals > 0 {
                refusals -= 1
                throw DataStoreError(.io, "the ledger refused the write", remedy: "Retry the save")
            }
            kept.append(entry)
        }
    }

    var entries: [Entry] { lock.withLock { kept } }
}

/// A store written as an adapter author would, against the kit's public API only: the
/// ``TableLoggingStore`` defaults over a persistence hook that keeps each change in a ``Ledger``
/// (only the values an update changed), and an open that replays the ledger into a table.
final class LedgerStore: TableLoggingStore {
    typealias Snapshot = DefaultSnapshot
    let identifier: String
    let schema: Schema
    let configuration: LedgerStoreConfiguration
    private let table: LockedValue<SnapshotTable>

    init(_ configuration: LedgerStoreConfiguration, migrationPlan: (any SchemaMigrationPlan.Type)?) throws {
        guard let schema = configuration.schema else {
            throw DataStoreError(.invalidConfiguration, "the ledger store has no schema", remedy: "Set a schema")
        }
        self.configuration = configuration
        self.schema = schema
        self.identifier = "ledger-" + configuration.name
        table = LockedValue(try Self.replay(configuration.ledger.entries, schema: schema))
    }

    /// The table the entries leave, rows in the order they were first written.
    private static func replay(_ entries: [Ledger.Entry], schema: Schema) throws -> SnapshotTable {
        var values: [PersistentIdentifier: [StoreValue]] = [:]
        var order: [PersistentIdentifier] = []
        var nextKey: Int64 = 1
        for entry in entries {
            switch entry {
            case .rows(let written, let changed, let deleted, let key):
                for id in deleted { values[id] = nil }
                for (id, slot, value) in changed { values[id]?[slot] = value }
                for (id, row) in written {
                    values[id] = row
                    order.append(id)
                }
                nextKey = max(nextKey, key)
            case .cleared(let entity):
                for id in order where id.entityName == entity { values[id] = nil }
            }
        }
        var table = SnapshotTable(schema: schema)
        let live = order.filter { values[$0] != nil }
        for entity in schema.entities {
            try table.loadRows(of: entity.name) { rows in
                for id in live where id.entityName == entity.name { try rows.append(id, values[id]!) }
            }
        }
        table.reserveKeys(below: nextKey)
        return table
    }

    func readTable<Result>(_ body: (SnapshotTable) throws -> Result) rethrows -> Result {
        try table.withLock { try body($0) }
    }

    func commit<Result>(
        author: String?, _ write: (inout SnapshotTable) throws -> (change: TableChange?, result: Result)
    ) throws -> (result: Result, transaction: Int64?) {
        try table.withLock { table in
            let (change, result) = try write(&table)
            guard let change else { return (result, nil) }
            do {
                try configuration.ledger.append(Self.entry(for: change, in: table))
            } catch {
                table.takeBack(change)
                throw error
            }
            table.apply(change)
            return (result, nil)
        }
    }

    /// The ledger's entry for `change`, read against `table` before it takes the change.
    private static func entry(for change: TableChange, in table: SnapshotTable) -> Ledger.Entry {
        switch change {
        case .save(let prepared):
            let gone = Set(prepared.deleted)
            var changed: [(id: PersistentIdentifier, slot: Int, value: StoreValue)] = []
            for new in prepared.updated where !gone.contains(new.persistentIdentifier) {
                guard let old = table.snapshot(for: new.persistentIdentifier) else { continue }
                for slot in new.values.indices where new.values[slot] != old.values[slot] {
                    changed.append((new.persistentIdentifier, slot, new.values[slot]))
                }
            }
            return .rows(
                written: prepared.inserted.map { ($0.persistentIdentifier, $0.values) }, changed: changed,
                deleted: prepared.deleted, nextKey: prepared.nextPrimaryKey)
        case .inserted(let ids):
            return .rows(
                written: ids.map { ($0, table.snapshot(for: $0)?.values ?? []) }, changed: [], deleted: [],
                nextKey: table.nextPrimaryKey)
        case .deletingEveryModel(let entity):
            return .cleared(entity: entity.name)
        @unknown default:
            preconditionFailure("a change this ledger does not know")
        }
    }
}

extension ConformanceAdapter {
    /// A store built on the kit's ``TableLoggingStore`` with nothing but its persistence hook.
    static let ledger = ConformanceAdapter(name: "LedgerStore", capabilities: [.erase]) { _ in
        LedgerStoreConfiguration(ledger: Ledger())
    }
}

/// The kit's ``TableLoggingStore`` defaults, on a store that supplies only the persistence hook.
struct TableLoggingStoreTests {
    @Test(arguments: ConformanceSuite.cases(for: .ledger))
    func conformance(_ testCase: ConformanceCase) throws {
        switch try testCase.run() {
        case .passed: break
        case .skipped(let reason): try Test.cancel(Comment(rawValue: reason))
        case .expectedFailure(let reason, let failure): withKnownIssue(Comment(rawValue: reason)) { throw failure }
        }
    }

    final class Shelf: PersistentModel {
        @Attribute var label: String = ""
        @Relationship(deleteRule: .cascade, inverse: \Box.shelf) var boxes: [Box] = []

        let persistentBackingData = BackingData()
        init() {}

        convenience init(label: String) {
            self.init()
            self.label = label
        }
    }

    final class Box: PersistentModel {
        @Attribute var label: String = ""
        @Attribute var weight: Int = 0
        @Relationship var shelf: Shelf?

        let persistentBackingData = BackingData()
        init() {}

        convenience init(label: String, weight: Int) {
            self.init()
            self.label = label
            self.weight = weight
        }
    }

    final class Stamp: PersistentModel {
        @Attribute var code: String = ""

        let persistentBackingData = BackingData()
        init() {}

        convenience init(code: String) {
            self.init()
            self.code = code
        }
    }

    private func container(_ ledger: Ledger) throws -> ModelContainer {
        try ModelContainer(
            for: Schema([Shelf.self, Box.self, Stamp.self]), configurations: [LedgerStoreConfiguration(ledger: ledger)])
    }

    /// The boxes' labels and weights and the stamps' codes, as a store opened on `ledger` reads them.
    private func contents(_ ledger: Ledger) throws -> [String] {
        let context = ModelContext(try container(ledger))
        let boxes = try context.fetch(FetchDescriptor<Box>(sortBy: [SortDescriptor(\.label)]))
        let stamps = try context.fetch(FetchDescriptor<Stamp>(sortBy: [SortDescriptor(\.code)]))
        return boxes.map { "\($0.label):\($0.weight):\($0.shelf?.label ?? "-")" } + stamps.map(\.code)
    }

    @Test func eachWriteKeepsOnlyWhatItChangedAndAStoreOpenedAgainReplaysIt() throws {
        let ledger = Ledger()
        let context = ModelContext(try container(ledger))
        let shelf = Shelf(label: "top")
        context.insert(shelf)
        for index in 0..<3 {
            let box = Box(label: "b\(index)", weight: index)
            box.shelf = shelf
            context.insert(box)
        }
        context.insert(Stamp(code: "s1"))
        try context.save()
        let boxes = try context.fetch(FetchDescriptor<Box>(sortBy: [SortDescriptor(\.label)]))
        boxes[1].weight = 10
        try context.save()
        guard case .rows(let written, let changed, let deleted, _) = ledger.entries.last else {
            Issue.record("the update kept no rows entry")
            return
        }
        #expect(written.isEmpty && deleted.isEmpty)
        #expect(changed.map(\.value) == [.int(10)])

        // A batch update and delete by predicate, then every stamp at once: an entity without
        // relationships reaches the hook as one change that names it.
        try context.delete(model: Box.self, where: #Predicate { $0.weight == 0 })
        try context.save()
        try context.delete(model: Stamp.self)
        try context.save()
        guard case .cleared(let entity) = ledger.entries.last else {
            Issue.record("deleting every stamp was not kept as the entity cleared")
            return
        }
        #expect(entity == "Stamp")
        let kept = ledger.entries.count

        // Writes that change nothing keep nothing.
        try context.delete(model: Box.self, where: #Predicate { $0.weight > 100 })
        try context.delete(model: Stamp.self)
        try context.save()
        #expect(ledger.entries.count == kept)

        #expect(try contents(ledger) == ["b1:10:top", "b2:2:top"])
        // Keys of deleted models are not minted again after the replay.
        let again = ModelContext(try container(ledger))
        let stamp = Stamp(code: "s2")
        again.insert(stamp)
        try again.save()
        let before = boxes.map(\.persistentModelID) + [shelf.persistentModelID]
        #expect(!before.contains(stamp.persistentModelID))
        #expect(try contents(ledger) == ["b1:10:top", "b2:2:top", "s2"])
    }

    @Test func aRefusedWriteLeavesTheStoreAsItWas() throws {
        let ledger = Ledger()
        let container = try container(ledger)
        let context = ModelContext(container)
        let shelf = Shelf(label: "top")
        context.insert(shelf)
        let box = Box(label: "a", weight: 1)
        box.shelf = shelf
        context.insert(box)
        context.insert(Stamp(code: "s1"))
        try context.save()
        let expected = try contents(ledger)

        // New models only: the batch insert has put them in the table before the hook refuses them.
        ledger.refuseNextWrite()
        context.insert(Stamp(code: "s2"))
        context.insert(Stamp(code: "s3"))
        #expect(throws: DataStoreError.self) { try context.save() }
        context.rollback()
        // A save of inserts, updates and deletes.
        ledger.refuseNextWrite()
        box.weight = 5
        context.insert(Box(label: "c", weight: 3))
        #expect(throws: DataStoreError.self) { try context.save() }
        context.rollback()
        // Every stamp at once.
        ledger.refuseNextWrite()
        #expect(throws: DataStoreError.self) { try context.delete(model: Stamp.self) }

        let fresh = ModelContext(container)
        let stamps = try fresh.fetch(FetchDescriptor<Stamp>()).map(\.code)
        #expect(stamps == ["s1"])
        let boxes = try fresh.fetch(FetchDescriptor<Box>()).map { "\($0.label):\($0.weight)" }
        #expect(boxes == ["a:1"])
        #expect(try contents(ledger) == expected)

        // The next write goes through.
        fresh.insert(Stamp(code: "s4"))
        try fresh.save()
        #expect(try contents(ledger) == expected + ["s4"])
    }
}
