import Foundation
import ModelStore

/// The `DataStore` contract, checked by driving the store directly with requests: what the
/// context relies on, even where today's context would not notice a violation.
enum StoreContractCases {
    /// Opens the adapter's store directly and runs `body` on its concrete type.
    static func withDriver(_ env: CaseEnvironment, _ body: (any StoreDriving) throws -> Void) throws {
        let store = try env.openStore()
        func open<S: DataStore>(_ store: S) throws { try body(StoreDriver(store, env)) }
        try open(store)
    }

    static let all: [CaseDefinition] = [
        CaseDefinition(
            .storeContract, "saveMintsPermanentIdentifiers",
            "save returns a distinct permanent identifier, minted by this store, for every inserted snapshot."
        ) { env in
            try withDriver(env) { try $0.checkMinting() }
        },
        CaseDefinition(
            .storeContract, "saveRemapsReferences",
            "save rewrites references to temporary identifiers in inserted and updated snapshots, cycles included."
        ) { env in
            try withDriver(env) { try $0.checkRemapping() }
        },
        CaseDefinition(
            .storeContract, "fetchReturnsOnlyRequestedEntity",
            "fetch returns snapshots of the requested entity only."
        ) { env in
            try withDriver(env) { try $0.checkEntities() }
        },
        CaseDefinition(
            .storeContract, "fetchHonoursWindow",
            "A window the store accepts is applied: offset skips, limit caps."
        ) { env in
            try withDriver(env) { try $0.checkWindow() }
        },
        CaseDefinition(
            .storeContract, "countAndIdentifiersAgreeWithFetch",
            "fetchCount and fetchIdentifiers agree with fetch for the same request."
        ) { env in
            try withDriver(env) { try $0.checkCounts() }
        },
        CaseDefinition(
            .storeContract, "sortedWindowsAgree",
            "Multi-key sorts with partial ties (case variants, combining and precomposed spellings) and windows "
                + "return Swift's order; fetchCount and fetchIdentifiers agree with fetch in number and order."
        ) { env in
            try withDriver(env) { try $0.checkOrderedWindows() }
        },
        CaseDefinition(
            .storeContract, "storedValuesReadBackByIdentifier",
            "Snapshots saved together, each with its own values, are fetched back under their own identifiers with "
                + "exactly those values, and updates land on the snapshots they name."
        ) { env in
            try withDriver(env) { try $0.checkStoredValues() }
        },
        CaseDefinition(
            .storeContract, "equivalentValueChangesAreStored",
            "An update to a value Swift's == calls equal (a canonically equivalent spelling, -0.0 for 0.0) is stored "
                + "exactly."
        ) { env in
            try withDriver(env) { try $0.checkEquivalentValueChanges() }
        },
        CaseDefinition(
            .storeContract, "sortTiesFollowIdentifierOrder",
            "A sort the store accepts breaks ties by ascending identifier."
        ) { env in
            try withDriver(env) { try $0.checkSortTies() }
        },
        CaseDefinition(
            .storeContract, "filtersByIdentifier",
            "A fetch by identifiers (how contexts load models) returns exactly those models."
        ) { env in
            try withDriver(env) { try $0.checkIdentifierFilter() }
        },
        CaseDefinition(
            .storeContract, "cachedSnapshotsAreCurrent",
            "cachedSnapshots never returns stale values or deleted models."
        ) { env in
            try withDriver(env) { try $0.checkCache() }
        },
        CaseDefinition(
            .storeContract, "enforcedUniquenessIsAtomic",
            "A store that says it enforces uniqueness rejects a duplicate and stores nothing of that save."
        ) { env in
            try withDriver(env) { try $0.checkEnforcedUniqueness() }
        },
        CaseDefinition(
            .storeContract, "expectedValuesRefuseAStaleUpdate",
            "A store that says it checks expected values refuses an update whose expected values differ from what it "
                + "holds with a conflict, and stores nothing of that save."
        ) { env in
            try withDriver(env) { try $0.checkExpectedValues() }
        },
    ]
}

/// The store-contract checks, callable on a driver of any store type.
protocol StoreDriving {
    func checkMinting() throws
    func checkRemapping() throws
    func checkEntities() throws
    func checkWindow() throws
    func checkCounts() throws
    func checkSortTies() throws
    func checkOrderedWindows() throws
    func checkStoredValues() throws
    func checkEquivalentValueChanges() throws
    func checkIdentifierFilter() throws
    func checkCache() throws
    func checkEnforcedUniqueness() throws
    func checkTwoPhaseSave() throws
    func checkExpectedValues() throws
    func checkConcurrentRequests() throws
    func checkUnsortedOrder() throws
    func checkPreparedSaveHoldsTheLock() throws
    func checkAsynchronousTwins() throws
    func checkAsynchronousSuspension() throws
    func checkSynchronousFromAnyThread() throws
}

extension StoreDriver: StoreDriving {
    func checkMinting() throws {
        let folder = try newSnapshot("Folder", ["name": .string("F")])
        let entries = try (1...3).map { try newEntry($0) }
        let inserted = [folder] + entries
        let result = try save(inserted: inserted, "saving a folder and 3 log entries directly")
        let minted = inserted.map { result.remappedIdentifiers[$0.persistentIdentifier] }
        try env.check(
            !minted.contains { $0 == nil },
            "save did not return a permanent identifier for every inserted snapshot: identifier not remapped",
            expected: "4 identifiers", found: "\(minted.compactMap { $0 }.count)")
        let ids = minted.compactMap { $0 }
        try env.check(
            !ids.contains { $0.isTemporary }, "save returned temporary identifiers as permanent ones", found: "\(ids)")
        try env.checkEqual(Set(ids).count, ids.count, "save minted the same identifier for two snapshots")
        try env.checkEqual(
            ids.map(\.entityName), inserted.map(\.persistentIdentifier.entityName),
            "save minted identifiers of the wrong entity")
        try env.check(
            ids.allSatisfy { $0.storeIdentifier == store.identifier },
            "save minted identifiers that do not carry the store's identifier",
            expected: store.identifier, found: "\(ids.map { $0.storeIdentifier ?? "nil" })")
        try env.checkEqual(result.storeIdentifier, store.identifier, "the save result names another store")
    }

    func checkRemapping() throws {
        var folder = try newSnapshot("Folder", ["name": .string("F")])
        var a = try newSnapshot("Specimen", ["code": .string("A"), "serial": .int(1)])
        var b = try newSnapshot("Specimen", ["code": .string("B"), "serial": .int(2)])
        a["folder"] = .reference(folder.persistentIdentifier)
        a["peer"] = .reference(b.persistentIdentifier)
        b["peer"] = .reference(a.persistentIdentifier)
        folder["specimens"] = .references([a.persistentIdentifier])
        let first = try save(
            inserted: [folder, a, b], "saving a folder and two specimens that refer to each other directly")
        let map = first.remappedIdentifiers
        let stored = try env.index(try fetchAll(Specimen.self), by: { $0["code"] }, "fetching the saved specimens")
        let storedFolder = try env.require(try fetchAll(Folder.self).first, "the saved folder was not fetched")
        let storedA = try env.require(stored[.string("A")], "the saved specimen 'A' was not fetched")
        let storedB = try env.require(stored[.string("B")], "the saved specimen 'B' was not fetched")
        for (name, value) in [
            ("A.folder", storedA["folder"]), ("A.peer", storedA["peer"]), ("B.peer", storedB["peer"]),
            ("Folder.specimens", storedFolder["specimens"]),
        ] {
            let refs = value?.referencedIdentifiers ?? []
            try env.check(
                !refs.contains { $0.isTemporary },
                "the stored '\(name)' still refers to a temporary identifier: references to models inserted in the "
                    + "same save were not remapped", found: "\(value ?? .null)")
        }
        try env.checkEqual(
            storedA["peer"], .reference(storedB.persistentIdentifier), "the stored 'A.peer' does not lead to 'B'")
        try env.checkEqual(
            storedB["peer"], .reference(storedA.persistentIdentifier), "the stored 'B.peer' does not lead to 'A'")
        try env.checkEqual(
            storedA["folder"], map[folder.persistentIdentifier].map(StoreValue.reference),
            "the stored 'A.folder' does not lead to the folder")
        // An updated snapshot that refers to a model inserted in the same save.
        var c = try newSnapshot("Specimen", ["code": .string("C"), "serial": .int(3)])
        c["folder"] = .reference(storedFolder.persistentIdentifier)
        var updatedFolder = storedFolder
        updatedFolder["specimens"] = .references([storedA.persistentIdentifier, c.persistentIdentifier])
        let second = try save(
            inserted: [c], updated: [updatedFolder], "saving a new specimen and the folder that now lists it")
        let cID = try env.require(second.remappedIdentifiers[c.persistentIdentifier], "no permanent identifier for 'C'")
        let refetched = try env.require(try fetchAll(Folder.self).first, "the folder was not fetched")
        let references = refetched["specimens"]?.referencedIdentifiers ?? []
        let cause =
            references.contains { $0.isTemporary }
            ? "an updated snapshot's reference to a model inserted in the same save was not remapped"
            : references == [storedA.persistentIdentifier]
                ? "the update of the to-many 'Folder.specimens' was not stored: relationship update dropped"
                : "the updated to-many 'Folder.specimens' was stored with other references than saved"
        try env.checkEqual(refetched["specimens"], .references([storedA.persistentIdentifier, cID]), cause)
    }

    func checkStoredValues() throws {
        let strings = ["e\u{301}mile", "émile", "Émile", "EMILE", "", "a\u{0}b"]
        let inserted = try strings.enumerated().map { index, string in
            try newSnapshot(
                "Specimen",
                [
                    "code": .string("V\(index)"), "serial": .int(Int64(index)), "title": .string(string),
                    "weight": .double(index == 0 ? -0.0 : Double(index) * 1.5), "count": .int(Int64(index * 11)),
                    "nickname": index % 2 == 0 ? .null : .string("nick-\(index)"),
                ])
        }
        let result = try save(inserted: inserted, "saving 6 specimens with distinct values directly")
        let ids = try inserted.map { snapshot in
            try env.require(
                result.remappedIdentifiers[snapshot.persistentIdentifier],
                "save returned no permanent identifier for an inserted snapshot: identifier not remapped")
        }
        func checkStored(_ expected: [DefaultSnapshot], after what: String) throws {
            let stored = try env.index(try fetchAll(Specimen.self), by: \.persistentIdentifier, "fetching \(what)")
            try env.checkEqual(
                stored.count, expected.count, "after \(what), the store keeps the wrong number of specimens")
            for (id, snapshot) in zip(ids, expected) {
                let found = try env.require(
                    stored[id], "after \(what), the specimen \(id) is not fetched under its identifier")
                for name in ["code", "title", "weight", "count", "nickname"] {
                    let wanted = snapshot[name] ?? .null
                    let got = found[name] ?? .null
                    let exact: Bool
                    switch (wanted, got) {
                    case (.string(let lhs), .string(let rhs)):
                        exact = lhs.unicodeScalars.elementsEqual(rhs.unicodeScalars)
                    case (.double(let lhs), .double(let rhs)): exact = lhs.bitPattern == rhs.bitPattern
                    default: exact = wanted == got
                    }
                    if !exact {
                        let cause =
                            wanted == got
                            ? " (equal to Swift, but not the same Unicode scalars or the same sign of zero: the store "
                                + "normalized the value)"
                            : expected.contains { $0[name] == got } ? " (another snapshot's value: rows swapped)" : ""
                        throw env.failure(
                            "after \(what), 'Specimen.\(name)' of \(id) is not what was saved\(cause): values MUST be "
                                + "stored exactly, on the snapshot they belong to",
                            expected: renderExactly(wanted), found: renderExactly(got))
                    }
                }
            }
        }
        try checkStored(inserted, after: "saving 6 specimens directly")
        var updated: [DefaultSnapshot] = []
        var expected = inserted
        for index in [1, 3, 4] {
            var snapshot = try env.require(
                try fetchAll(Specimen.self).first { $0.persistentIdentifier == ids[index] },
                "the saved specimen \(ids[index]) is not fetched")
            snapshot["title"] = .string("updated-\(index)")
            snapshot["count"] = .int(Int64(1000 + index))
            snapshot["nickname"] = index == 3 ? .null : .string("now-\(index)")
            updated.append(snapshot)
            expected[index]["title"] = snapshot["title"]
            expected[index]["count"] = snapshot["count"]
            expected[index]["nickname"] = snapshot["nickname"]
        }
        try save(updated: updated, "saving updates of 3 specimens, each with its own values, directly")
        try checkStored(expected, after: "updating 3 of 6 specimens directly")
    }

    func checkEntities() throws {
        let folder = try newSnapshot("Folder", ["name": .string("F")])
        let note = try newSnapshot("Note", ["text": .string("n")])
        let hold = try newSnapshot("Hold", ["reason": .string("r")])
        try save(
            inserted: [folder, note, hold] + (try (1...2).map { try newEntry($0) }),
            "saving models of four entities directly")
        func check<T: PersistentModel>(_ type: T.Type, expecting count: Int) throws {
            let name = Schema.entityName(for: T.self)
            let snapshots = try fetchAll(T.self)
            if let stray = snapshots.first(where: {
                $0.persistentIdentifier.entityName != name || $0.entity.name != name
            }) {
                throw env.failure(
                    "a fetch of '\(name)' returned a snapshot of '\(stray.entity.name)': wrong entity",
                    expected: "only '\(name)'", found: "\(snapshots.map(\.entity.name))")
            }
            try env.checkEqual(snapshots.count, count, "a fetch of '\(name)' returned the wrong number of snapshots")
        }
        try check(Folder.self, expecting: 1)
        try check(Note.self, expecting: 1)
        try check(Hold.self, expecting: 1)
        try check(LogEntry.self, expecting: 2)
        try check(Specimen.self, expecting: 0)
    }

    func checkWindow() throws {
        if let capabilities = querying?.queryCapabilities, !capabilities.offsetAndLimit {
            throw CaseNotApplicable(reason: "the store's queryCapabilities say it does not apply offset and limit")
        }
        let ids = try saveEntries(try (1...12).map { try newEntry($0) })
        let all = try fetchAll(LogEntry.self).map(\.persistentIdentifier)
        try env.checkEqual(Set(all), Set(ids), "fetching every entry directly returned the wrong entries")
        var descriptor = FetchDescriptor<LogEntry>()
        descriptor.fetchOffset = 2
        descriptor.fetchLimit = 3
        let query = StoreQuery(entityName: "LogEntry", offset: 2, limit: 3)
        guard
            let window = try fetch(
                request(LogEntry.self, descriptor: descriptor, query: query),
                "fetching with fetchOffset 2 and fetchLimit 3 directly")?.map(\.persistentIdentifier)
        else {
            throw CaseNotApplicable(reason: "the store asks the context to apply offset and limit in memory")
        }
        if window.first == all.first {
            throw env.failure(
                "fetch with fetchOffset 2 returned the first item: offset ignored",
                expected: "\(all[2..<5])", found: "\(window)")
        }
        try env.check(window.count <= 3, "fetch with fetchLimit 3 returned \(window.count) snapshots: limit ignored")
        try env.checkEqual(
            window, Array(all[2..<5]), "fetch with fetchOffset 2 and fetchLimit 3 returned the wrong snapshots")
    }

    func checkCounts() throws {
        _ = try saveEntries(try (1...12).map { try newEntry($0, bucket: $0 % 3) })
        let capabilities = querying?.queryCapabilities
        var requests: [(String, DataStoreFetchRequest<LogEntry>)] = [("every entry", request(LogEntry.self))]
        if capabilities?.offsetAndLimit ?? true {
            var windowed = FetchDescriptor<LogEntry>()
            windowed.fetchOffset = 4
            windowed.fetchLimit = 5
            let query = StoreQuery(entityName: "LogEntry", offset: 4, limit: 5)
            requests.append(("fetchOffset 4, fetchLimit 5", request(LogEntry.self, descriptor: windowed, query: query)))
        }
        if let capabilities {
            if capabilities.filters.contains(.equality) {
                let query = StoreQuery(entityName: "LogEntry", filter: .equal("bucket", .int(1)))
                requests.append(("bucket == 1", request(LogEntry.self, query: query)))
            }
        } else {
            let descriptor = FetchDescriptor<LogEntry>(predicate: #Predicate { $0.bucket == 1 })
            requests.append(("bucket == 1", request(LogEntry.self, descriptor: descriptor)))
        }
        for (name, request) in requests {
            guard let snapshots = try fetch(request, "fetching '\(name)' directly") else { continue }
            let count: Int
            do {
                count = try store.fetchCount(request)
            } catch DataStoreError.preferInMemoryFilter {
                throw env.failure(
                    "fetchCount '\(name)' asked for in-memory filtering although fetch ran the same request: "
                        + "count disagrees with fetch")
            }
            try env.check(
                count == snapshots.count,
                "fetchCount '\(name)' returned \(count) but fetch returned \(snapshots.count) snapshots: "
                    + "count disagrees with fetch",
                expected: "\(snapshots.count)", found: "\(count)")
            let ids = try env.step("fetching identifiers '\(name)' directly") { try store.fetchIdentifiers(request) }
            try env.checkEqual(
                ids, snapshots.map(\.persistentIdentifier),
                "fetchIdentifiers '\(name)' disagrees with fetch (other identifiers, or another order)")
        }
    }

    func checkSortTies() throws {
        _ = try saveEntries(try (1...15).map { try newEntry($0, bucket: $0 % 3) })
        if let capabilities = querying?.queryCapabilities, !capabilities.sorting {
            throw CaseNotApplicable(reason: "the store's queryCapabilities say it does not sort")
        }
        var sawSort = false
        for ascending in [true, false] {
            let query = StoreQuery(
                entityName: "LogEntry", sort: [StoreSortKey(property: "bucket", ascending: ascending)])
            let descriptor = FetchDescriptor<LogEntry>(sortBy: [
                SortDescriptor(\.bucket, order: ascending ? .forward : .reverse)
            ])
            guard
                let sorted = try fetch(
                    request(LogEntry.self, descriptor: descriptor, query: query),
                    "fetching entries sorted by 'bucket' directly")
            else { continue }
            sawSort = true
            let rows = sorted.map { (key: $0["bucket"] ?? .null, id: $0.persistentIdentifier) }
            let keys = rows.map(\.key)
            let expectedKeys = keys.sorted {
                ascending
                    ? StoreValue.compare($0, $1) == .orderedAscending
                    : StoreValue.compare($0, $1) == .orderedDescending
            }
            try env.checkEqual(keys, expectedKeys, "a store sort by 'bucket' returned the keys out of order")
            try FetchChecks.tiesAscend(
                rows, env, what: "a store sort by 'bucket' (\(ascending ? "ascending" : "descending"))")
        }
        if !sawSort { throw CaseNotApplicable(reason: "the store asks the context to sort in memory") }
    }

    func checkIdentifierFilter() throws {
        if let capabilities = querying?.queryCapabilities, !capabilities.filters.contains(.identifiers) {
            throw CaseNotApplicable(reason: "the store's queryCapabilities say it does not filter by identifiers")
        }
        let ids = try saveEntries(try (1...8).map { try newEntry($0) })
        let wanted = Set([ids[1], ids[4], ids[6]])
        let descriptor = FetchDescriptor<LogEntry>(predicate: #Predicate { wanted.contains($0.persistentModelID) })
        let query = StoreQuery(entityName: "LogEntry", filter: .identifiers(wanted))
        guard
            let found = try fetch(
                request(LogEntry.self, descriptor: descriptor, query: query),
                "fetching 3 entries by identifier directly")
        else {
            throw CaseNotApplicable(reason: "the store asks the context to filter identifiers in memory")
        }
        try env.checkEqual(
            Set(found.map(\.persistentIdentifier)), wanted,
            "a fetch of 3 entries by identifier returned other entries")
    }

    func checkCache() throws {
        let ids = try saveEntries(try (1...3).map { try newEntry($0) })
        var snapshots = try fetchAll(LogEntry.self)
        let index = try env.require(
            snapshots.firstIndex { $0.persistentIdentifier == ids[0] }, "entry 1 was not fetched")
        snapshots[index]["label"] = .string("changed")
        let doomed = try env.require(snapshots.first { $0.persistentIdentifier == ids[1] }, "entry 2 was not fetched")
        try save(updated: [snapshots[index]], deleted: [doomed], "saving an update and a delete directly")
        let cached = try env.step("reading cachedSnapshots") {
            try store.cachedSnapshots(for: ids, editingState: editingState).mapValues(\.defaultSnapshot)
        }
        if let stale = cached[ids[0]] {
            try env.checkEqual(
                stale["label"], .string("changed"), "cachedSnapshots returned a stale snapshot after an update")
        }
        try env.check(cached[ids[1]] == nil, "cachedSnapshots returned a deleted model")
        let current = try fetchAll(LogEntry.self)
        try env.check(
            current.contains { $0["label"] == .string("changed") }
                && !current.contains { $0.persistentIdentifier == ids[1] },
            "a direct save of an update and a delete was not applied: update dropped or delete ignored")
    }

    func checkExpectedValues() throws {
        guard store.checksExpectedValues else {
            throw CaseNotApplicable(
                reason: "the store leaves conflict checks to the context (checksExpectedValues is false)")
        }
        let ids = try saveEntries([try newEntry(1), try newEntry(2)])
        let stored = try fetchAll(LogEntry.self)
        let first = try env.require(stored.first { $0.persistentIdentifier == ids[0] }, "a saved entry was not fetched")
        let second = try env.require(
            stored.first { $0.persistentIdentifier == ids[1] }, "a saved entry was not fetched")
        let labelSlot = try env.require(first.entity.slot(of: "label"), "the fixture 'LogEntry' has no 'label'")
        // The first entry as another writer last saw it: a label it no longer has.
        var stale = first.values
        stale[labelSlot] = .string("changed by someone else")
        var firstUpdate = first
        firstUpdate.values[labelSlot] = .string("mine")
        var secondUpdate = second
        secondUpdate.values[labelSlot] = .string("also mine")
        var request = DataStoreSaveChangesRequest<Store.Snapshot>(
            editingState: editingState, inserted: [],
            updated: [Store.Snapshot(firstUpdate), Store.Snapshot(secondUpdate)], deleted: [])
        request.expectedValues = [ids[0]: stale, ids[1]: second.values]
        do {
            _ = try store.save(request)
            throw env.failure(
                "a save whose expected values for \(ids[0]) differ from the stored ones was accepted: a change "
                    + "another writer made since the check would have been overwritten (checksExpectedValues is true)")
        } catch let error as DataStoreError where error.code == .conflict {
            // Refused, as it must be.
        }
        let after = try fetchAll(LogEntry.self)
        try env.checkEqual(
            after.map { $0.values[labelSlot] }, stored.map { $0.values[labelSlot] },
            "a save refused with a conflict changed stored values: not all or nothing")
        // With expected values that match, the same save goes through.
        request.expectedValues = [ids[0]: first.values, ids[1]: second.values]
        try env.step("saving with expected values that match the stored ones") { _ = try store.save(request) }
    }

    func checkEnforcedUniqueness() throws {
        guard let capabilities = querying?.queryCapabilities, capabilities.enforcesUniqueness else {
            throw CaseNotApplicable(
                reason: "the store leaves unique constraints to the context (enforcesUniqueness is false)")
        }
        _ = try saveEntries([try newEntry(1)])
        let snapshots = [try newEntry(2), try newEntry(1, label: "duplicate"), try newEntry(3)]
        let request = DataStoreSaveChangesRequest<Store.Snapshot>(
            editingState: editingState, inserted: snapshots.map(Store.Snapshot.init), updated: [], deleted: [])
        try env.expectError(
            [.uniqueConstraintViolation], "saving a duplicate 'sequence' directly",
            ifItSucceeds: "a store that says it enforces uniqueness saved a second 'LogEntry' with 'sequence' 1: "
                + "unique constraint not enforced"
        ) { _ = try store.save(request) }
        let stored = try fetchAll(LogEntry.self).compactMap { $0["sequence"] }
        try env.checkEqual(
            stored, [.int(1)], "a save refused for a duplicate stored some of its snapshots: the save was not atomic")
    }
}
