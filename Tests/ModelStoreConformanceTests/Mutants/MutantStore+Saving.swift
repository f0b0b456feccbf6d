import Foundation
import ModelStore
import ModelStoreAdapterKit

/// Saving, with the save, identifier and value mutants.
extension MutantStore {
    // MARK: Saving

    func save(
        _ request: DataStoreSaveChangesRequest<DefaultSnapshot>
    ) throws -> DataStoreSaveChangesResult<DefaultSnapshot> {
        var request = request
        switch mutation {
        case .dropsUpdates: request.updated = []
        case .dropsDeletes: request.deleted = []
        default: break
        }
        request.inserted = request.inserted.map(transformValues)
        request.updated = request.updated.map(transformValues)
        if has(.syncRefusedInsideTasks), withUnsafeCurrentTask(body: { $0 != nil }) {
            // As a store that keeps its blocking calls away from tasks instead of only off its own threads.
            throw DataStoreError(
                .unsupportedFeature, "the mutant store's synchronous save cannot be called from a task",
                remedy: "Call the asynchronous save")
        }
        if has(.racesBetweenReadAndWrite) { return try saveBetweenTwoLocks(request) }
        // A prepared two-phase save holds the write lock until it finishes or aborts.
        writeLock.lock()
        defer { writeLock.unlock() }
        return try locked(writing: true) { state in
            do {
                return try save(request, &state)
            } catch {
                if has(.historyRecordsFailedSaves) { recordFailedSave(request, &state) }
                throw error
            }
        }
    }

    /// Reads the table under the lock and writes it back under another: a save that overlaps this one in
    /// between is lost, and both mint the same keys.
    private func saveBetweenTwoLocks(
        _ request: DataStoreSaveChangesRequest<DefaultSnapshot>
    ) throws -> DataStoreSaveChangesResult<DefaultSnapshot> {
        var next = state.withLock { $0.table }
        Thread.sleep(forTimeInterval: 0.002)
        let result = try next.save(request, storeIdentifier: identifier)
        state.withLock { $0.table = next }
        return result
    }

    /// Saves under the lock, with the save mutants.
    private func save(
        _ request: DataStoreSaveChangesRequest<DefaultSnapshot>, _ state: inout State
    ) throws -> DataStoreSaveChangesResult<DefaultSnapshot> {
        var request = request
        request.updated = request.updated.map { keepStoredValues(of: $0, in: state.table) }
        if has(.skipsUpdatesEqualToStored) {
            let table = state.table
            request.updated.removeAll { table.snapshot(for: $0.persistentIdentifier)?.values == $0.values }
        }
        if has(.uniquenessCaseInsensitive) { try refuseCaseInsensitiveDuplicates(request, state.table) }
        if has(.compoundKeyJoined) { try refuseJoinedKeyDuplicates(request, state.table) }
        if has(.cascadesEveryRule) { cascadeEverything(&request, state.table) }
        var next = state.table
        var result: DataStoreSaveChangesResult<DefaultSnapshot>
        do {
            if has(.uniquenessCheckedOnInsertOnly) {
                result = try saveUpdatesUnchecked(request, &next)
            } else {
                result = try next.save(request, storeIdentifier: identifier)
            }
        } catch let error as DataStoreError where error.code == .uniqueConstraintViolation {
            if has(.notAtomicOnUniqueViolation), !request.inserted.isEmpty {
                var partial = request
                partial.inserted = Array(request.inserted.prefix(1))
                if (try? next.save(partial, storeIdentifier: identifier)) != nil { state.table = next }
            }
            guard has(.acceptsUniqueViolations) else { throw error }
            result = try saveReplacingConflicts(request, &next)
        }
        try corruptAfterSave(request, result.remappedIdentifiers, &next)
        let equalUpdatesOnly =
            request.inserted.isEmpty && request.deleted.isEmpty
            && request.updated.allSatisfy {
                state.table.snapshot(for: $0.persistentIdentifier)?.values == $0.values
            }
        let change = Change.save(
            inserts: !request.inserted.isEmpty, updates: !request.updated.isEmpty,
            deletes: !request.deleted.isEmpty,
            equalUpdatesOnly: equalUpdatesOnly)
        let before = state.table
        result.historyToken = try commit(
            next, change, from: before, author: request.editingState.author, remapped: result.remappedIdentifiers,
            &state)
        if has(.historyTokenNotReported) { result.historyToken = nil }
        state.previous = [:]
        for snapshot in request.updated {
            state.previous[snapshot.persistentIdentifier] = before.snapshot(for: snapshot.persistentIdentifier)
        }
        for snapshot in request.deleted {
            state.graveyard[snapshot.persistentIdentifier] = before.snapshot(for: snapshot.persistentIdentifier)
        }
        return mintingMutated(result, request)
    }

    /// Saves inserts and deletes through the table's checks, and stores the updates without checking
    /// uniqueness (the bug of a store that checks unique values only when models are inserted).
    private func saveUpdatesUnchecked(
        _ request: DataStoreSaveChangesRequest<DefaultSnapshot>, _ table: inout SnapshotTable
    ) throws -> DataStoreSaveChangesResult<DefaultSnapshot> {
        var checked = request
        checked.updated = []
        let result = try table.save(checked, storeIdentifier: identifier)
        table.applyUpdate(
            request.updated.map {
                $0.copy(persistentIdentifier: $0.persistentIdentifier, remappedIdentifiers: result.remappedIdentifiers)
            })
        return result
    }

    /// The result the context receives, for the minting mutants.
    private func mintingMutated(
        _ result: DataStoreSaveChangesResult<DefaultSnapshot>, _ request: DataStoreSaveChangesRequest<DefaultSnapshot>
    ) -> DataStoreSaveChangesResult<DefaultSnapshot> {
        var map = result.remappedIdentifiers
        switch mutation {
        case .mintsTemporaryIdentifiers:
            for key in map.keys { map[key] = key }
        case .mintsSameIdentifierTwice:
            let byEntity = Dictionary(grouping: request.inserted.map(\.persistentIdentifier), by: \.entityName)
            for ids in byEntity.values where ids.count > 1 { map[ids[1]] = map[ids[0]] }
        case .mintsForAnotherStore:
            for (key, value) in map {
                guard case .int(let primaryKey) = value.primaryKey else { continue }
                map[key] = PersistentIdentifier.identifier(
                    for: "another-store", entityName: value.entityName, primaryKey: primaryKey)
            }
        default:
            return result
        }
        return DataStoreSaveChangesResult(
            for: identifier, remappedIdentifiers: map, historyToken: result.historyToken)
    }

    /// Applies the save mutants that corrupt what was just stored.
    private func corruptAfterSave(
        _ request: DataStoreSaveChangesRequest<DefaultSnapshot>, _ map: [PersistentIdentifier: PersistentIdentifier],
        _ table: inout SnapshotTable
    ) throws {
        switch mutation {
        case .remapsNothingInInserted, .remapsToOneOnly:
            let toManyOnly = has(.remapsToOneOnly)
            let restored = request.inserted.compactMap { original -> DefaultSnapshot? in
                guard let id = map[original.persistentIdentifier], var stored = table.snapshot(for: id) else {
                    return nil
                }
                for relationship in original.entity.relationships where !toManyOnly || !relationship.isToOne {
                    stored.values[relationship.slot] = original.values[relationship.slot]
                }
                return stored
            }
            table.applyUpdate(restored)
        case .remapsNothingInUpdated:
            let restored = request.updated.compactMap { original -> DefaultSnapshot? in
                guard var stored = table.snapshot(for: original.persistentIdentifier) else { return nil }
                for relationship in original.entity.relationships {
                    stored.values[relationship.slot] = original.values[relationship.slot]
                }
                return stored
            }
            table.applyUpdate(restored)
        case .dropsInsertsAfterFirst:
            table.delete(request.inserted.dropFirst().compactMap { map[$0.persistentIdentifier] })
        case .shiftsUpdates, .swapsInsertedRows:
            let ids =
                has(.shiftsUpdates)
                ? request.updated.map(\.persistentIdentifier)
                : request.inserted.compactMap { map[$0.persistentIdentifier] }
            for group in Dictionary(grouping: ids, by: \.entityName).values where group.count > 1 {
                let stored = group.compactMap { table.snapshot(for: $0) }
                guard stored.count == group.count else { continue }
                table.applyUpdate(
                    stored.indices.map { index in
                        DefaultSnapshot(
                            persistentIdentifier: group[(index + 1) % group.count], entity: stored[index].entity,
                            values: stored[index].values)
                    })
            }
        default:
            break
        }
    }

    /// For the mutants that ignore some kinds of change: the update with the stored values kept.
    private func keepStoredValues(of snapshot: DefaultSnapshot, in table: SnapshotTable) -> DefaultSnapshot {
        guard
            [.dropsNilUpdates, .dropsRelationshipUpdates, .dropsToManyUpdates, .dropsClearedReferences].contains(
                mutation),
            let stored = table.snapshot(for: snapshot.persistentIdentifier)
        else { return snapshot }
        var kept = snapshot
        switch mutation {
        case .dropsNilUpdates:
            for attribute in snapshot.entity.attributes where snapshot.values[attribute.slot] == .null {
                kept.values[attribute.slot] = stored.values[attribute.slot]
            }
        case .dropsClearedReferences:
            for relationship in snapshot.entity.relationships
            where snapshot.values[relationship.slot] == .null || snapshot.values[relationship.slot] == .references([]) {
                kept.values[relationship.slot] = stored.values[relationship.slot]
            }
        default:
            for relationship in snapshot.entity.relationships
            where has(.dropsRelationshipUpdates) || !relationship.isToOne {
                kept.values[relationship.slot] = stored.values[relationship.slot]
            }
        }
        return kept
    }

    /// For the value mutants: the snapshot with its values changed the way the bug changes them.
    private func transformValues(_ snapshot: DefaultSnapshot) -> DefaultSnapshot {
        guard let requirement = mutation?.requirement,
            requirement == "DataStore.save (values)" || requirement.hasPrefix("value corpus")
        else { return snapshot }
        var changed = snapshot
        changed.values = snapshot.values.map(transform)
        if has(.emptyStringStoredAsNil) {
            for case .attribute(let attribute) in snapshot.entity.properties
            where attribute.isOptional && changed.values[attribute.slot] == .string("") {
                changed.values[attribute.slot] = .null
            }
        }
        return changed
    }

    private func transform(_ value: StoreValue) -> StoreValue {
        switch (mutation, value) {
        case (.normalizesStrings, .string(let string)): .string(string.precomposedStringWithCanonicalMapping)
        case (.dropsSignOfZero, .double(let number)) where number == 0: .double(0)
        case (.truncatesDates, .date(let date)):
            .date(
                Date(timeIntervalSinceReferenceDate: (date.timeIntervalSinceReferenceDate * 1000).rounded(.down) / 1000)
            )
        case (.decimalsThroughDouble, .decimal(let decimal)):
            .decimal(Decimal(NSDecimalNumber(decimal: decimal).doubleValue))
        case (.clampsLargeUnsigned, .uint(let number)): .uint(min(number, UInt64(Int64.max)))
        case (.integersThroughDouble, .int(let number)): .int(Int64(exactly: Double(number)) ?? number)
        case (.nanStoredAsZero, .double(let number)) where number.isNaN: .double(0)
        case (.subnormalsFlushedToZero, .double(let number)) where number.isSubnormal:
            .double(number.sign == .minus ? -0.0 : 0)
        case (.stringsCutAtNUL, .string(let string)): .string(String(string.prefix { $0 != "\u{0}" }))
        case (.byteOrderMarkStripped, .string(let string)) where string.hasPrefix("\u{FEFF}"):
            .string(String(string.unicodeScalars.dropFirst()))
        case (.datesToMicroseconds, .date(let date)):
            .date(Date(timeIntervalSinceReferenceDate: (date.timeIntervalSinceReferenceDate * 1e6).rounded() / 1e6))
        case (.largeDataCutAt64KiB, .data(let data)) where data.count > 65_536: .data(data.prefix(65_536))
        case (.arraysDeduplicated, .array(let items)):
            // As a store that keeps an array in a set-like table.
            .array(items.reduce(into: []) { kept, item in if !kept.contains(item) { kept.append(item) } })
        case (.urlsLowercased, .url(let url)): .url(URL(string: url.absoluteString.lowercased()) ?? url)
        case (_, .array(let items)): .array(items.map(transform))
        case (_, .dictionary(let items)): .dictionary(items.mapValues(transform))
        default: value
        }
    }

    /// Adds to the deletes every stored model that refers to a deleted one, as if every rule were `.cascade`.
    private func cascadeEverything(
        _ request: inout DataStoreSaveChangesRequest<DefaultSnapshot>, _ table: SnapshotTable
    ) {
        let deleted = Set(request.deleted.map(\.persistentIdentifier))
        guard !deleted.isEmpty else { return }
        for snapshot in table.allSnapshots where !deleted.contains(snapshot.persistentIdentifier) {
            let refersToDeleted = snapshot.entity.relationships.contains { relationship in
                snapshot.values[relationship.slot].referencedIdentifiers.contains { deleted.contains($0) }
            }
            if refersToDeleted {
                request.deleted.append(snapshot)
                request.updated.removeAll { $0.persistentIdentifier == snapshot.persistentIdentifier }
            }
        }
    }

    private func refuseCaseInsensitiveDuplicates(
        _ request: DataStoreSaveChangesRequest<DefaultSnapshot>, _ table: SnapshotTable
    ) throws {
        var seen: Set<String> = []
        for snapshot in table.allSnapshots + request.inserted {
            for attribute in snapshot.entity.attributes where attribute.isUnique {
                guard case .string(let string) = snapshot.values[attribute.slot] else { continue }
                let key = "\(snapshot.entity.name).\(attribute.name)=\(string.lowercased())"
                if !seen.insert(key).inserted {
                    throw DataStoreError(
                        .uniqueConstraintViolation, "a unique value is taken", entityName: snapshot.entity.name,
                        propertyNames: [attribute.name])
                }
            }
        }
    }

    /// Compares compound constraints through their values' texts joined end to end, as an index on a
    /// concatenated column would.
    private func refuseJoinedKeyDuplicates(
        _ request: DataStoreSaveChangesRequest<DefaultSnapshot>, _ table: SnapshotTable
    ) throws {
        var seen: Set<String> = []
        for snapshot in table.allSnapshots + request.inserted {
            for names in snapshot.entity.uniquenessConstraints where names.count > 1 {
                let joined = names.map { name -> String in
                    switch snapshot[name] {
                    case .string(let text)?: text
                    case .int(let number)?: String(number)
                    case let value?: "\(value)"
                    case nil: ""
                    }
                }
                .joined()
                if !seen.insert("\(snapshot.entity.name).\(names)=\(joined)").inserted {
                    throw DataStoreError(
                        .uniqueConstraintViolation, "a unique value is taken", entityName: snapshot.entity.name,
                        propertyNames: names)
                }
            }
        }
    }

    /// On a unique conflict with a stored model, deletes that model and tries again.
    private func saveReplacingConflicts(
        _ request: DataStoreSaveChangesRequest<DefaultSnapshot>, _ table: inout SnapshotTable
    ) throws -> DataStoreSaveChangesResult<DefaultSnapshot> {
        var request = request
        while true {
            do {
                return try table.save(request, storeIdentifier: identifier)
            } catch let error as DataStoreError where error.code == .uniqueConstraintViolation {
                guard let entity = error.entityName.flatMap(schema.entity(named:)),
                    error.propertyNames.count == error.conflictingValues.count,
                    let holder = table.snapshots(of: entity.name).first(where: { snapshot in
                        zip(error.propertyNames, error.conflictingValues).allSatisfy { snapshot[$0] == $1 }
                    }),
                    !request.deleted.contains(where: { $0.persistentIdentifier == holder.persistentIdentifier })
                else { throw error }
                request.deleted.append(holder)
                request.updated.removeAll { $0.persistentIdentifier == holder.persistentIdentifier }
            }
        }
    }

}
