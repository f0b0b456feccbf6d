import Foundation
import ModelStore
import PostgresNIO

extension PostgreSQLStore {
    /// How many saves the store committed, and in how many transactions: with
    /// ``groupsCommits`` the saves that arrive while another is being committed share a
    /// transaction, so ``transactions`` grows more slowly than ``saves``. Counted since the store
    /// opened, over ``save(_:)-(DataStoreSaveChangesRequest<DefaultSnapshot>)`` calls that stored
    /// their changes (not the batch calls, nor saves that failed).
    public struct CommitCounts: Sendable, Hashable {
        /// The saves committed.
        public var saves: Int
        /// The transactions that committed them.
        public var transactions: Int

        /// Counts.
        public init(saves: Int, transactions: Int) {
            self.saves = saves
            self.transactions = transactions
        }
    }

    /// How many saves the store committed, and in how many transactions (see ``CommitCounts``).
    public var commitCounts: CommitCounts { commitGroups.counts }

    /// Whether saves that arrive while another save of this store is being committed wait for it
    /// and are then committed together, in one transaction: one lock of the history's counter and
    /// one flush of PostgreSQL's log for them all, instead of one each, one after another (every
    /// save takes that counter, see `HistoryLog`). It starts as the configuration's
    /// ``PostgreSQLStoreConfiguration/groupCommit`` and may be changed while the store is open.
    ///
    /// Each save of a group runs under a savepoint of its own, in the order the saves arrived,
    /// with the same checks as alone (the rows' versions and expected values, unique indexes,
    /// references): one that fails is rolled back to its savepoint and gets its own error, and the
    /// others go on. A save returns only once the group's `COMMIT` succeeded. When the group's
    /// transaction fails as a whole (a lost connection, a deadlock after its retries, a refused
    /// prepared statement), nothing of it was committed, and each of its saves is run again in a
    /// transaction of its own, so that each gets its own outcome; when the connection ends during
    /// the `COMMIT` and the server cannot tell whether it committed, the saves it held fail with
    /// ``DataStoreError/Code/io`` saying so, as a save alone would. A save that arrives while no
    /// other is being committed goes at once, alone, as without grouping; a save of one changed
    /// model that is one statement (see `OneStatementUpdate`) is never grouped.
    ///
    /// What it costs: a group's saves run one after another on one connection, where saves alone
    /// write their rows at once on several and wait only for the counter; what it saves is a
    /// commit, and its flush to disk, per save. It pays where many saves arrive at once (a sync
    /// server); an app that saves from one thread at a time sees no difference.
    public var groupsCommits: Bool {
        get { commitGroups.enabled.withLock { $0 } }
        set { commitGroups.enabled.withLock { $0 = newValue } }
    }

    /// Saves `request` with the saves that arrive while another is being committed (see
    /// ``groupsCommits``).
    func writeInGroup(
        _ request: DataStoreSaveChangesRequest<DefaultSnapshot>, versions read: [PersistentIdentifier: Int64]
    ) async throws -> CommitGroups.Saved {
        let save = CommitGroups.Save(request: request, versions: read)
        switch await commitGroups.join(save) {
        case .saved(let outcome):
            return try outcome.get()
        case .alone:
            return try await write(request, versions: read)
        case .lead(let others):
            return try await lead(save, with: others)
        }
    }

    /// Commits `own` and `others` (which wait) together, tells each waiting save its outcome, hands
    /// the commit of the saves that arrived meanwhile to the first of them, and returns `own`'s
    /// outcome.
    private func lead(_ own: CommitGroups.Save, with others: [CommitGroups.Waiting]) async throws -> CommitGroups.Saved
    {
        guard !others.isEmpty else {
            // Alone: as without grouping, with the history's row and the COMMIT in one call.
            defer { commitGroups.handOff() }
            return try await write(own.request, versions: own.versions)
        }
        let saves = [own] + others.map(\.save)
        let outcomes: [Result<CommitGroups.Saved, any Error>]
        do {
            outcomes = try await database.transactionTellingUnknown("saving \(saves.count) saves together") { session in
                try await self.applyGroup(saves, on: session)
            }
        } catch let unknown as CommitOutcomeUnknown {
            // The saves that were written may or may not be stored; those refused in the group stored
            // nothing, and run again alone, since their refusal may have come from the others.
            commitGroups.handOff()
            let doubt = ModelStoreErrors.commitOutcomeUnknown(
                "saving \(saves.count) saves together", url: database.url, underlying: unknown.underlying)
            let written = (unknown.value as? [Result<CommitGroups.Saved, any Error>])?.map {
                if case .success = $0 { true } else { false }
            }
            for (index, waiting) in others.enumerated() {
                waiting.tell(written?[index + 1] == false ? .alone : .saved(.failure(doubt)))
            }
            guard written?[0] == false else { throw doubt }
            return try await write(own.request, versions: own.versions)
        } catch {
            // Nothing was committed: each save runs again in a transaction of its own, for its own outcome.
            commitGroups.handOff()
            for waiting in others { waiting.tell(.alone) }
            return try await write(own.request, versions: own.versions)
        }
        let stored = outcomes.filter { if case .success = $0 { true } else { false } }.count
        commitGroups.count(saves: stored, transactions: stored > 0 ? 1 : 0)
        for (waiting, outcome) in zip(others, outcomes.dropFirst()) { waiting.tell(.saved(outcome)) }
        commitGroups.handOff()
        return try outcomes[0].get()
    }

    /// Writes `saves` in the session's transaction, in order, each under a savepoint of its own:
    /// a save that fails for what it holds (``isOwnFailure(_:)``) is rolled back to its savepoint
    /// and gets its error; any other error ends the transaction (thrown, so that nothing commits).
    private func applyGroup(
        _ saves: [CommitGroups.Save], on session: Session
    ) async throws -> [Result<CommitGroups.Saved, any Error>] {
        let writer = self.writer(on: session)
        var outcomes: [Result<CommitGroups.Saved, any Error>] = []
        outcomes.reserveCapacity(saves.count)
        for (index, save) in saves.enumerated() {
            let savepoint = "modelstore_group_\(index)"
            if index == 0 {
                // Sent with the transaction's BEGIN; the later ones go with their save's first statement.
                try await session.execute("SAVEPOINT \(savepoint)")
            } else {
                session.opening.set("SAVEPOINT \(savepoint)")
            }
            do {
                outcomes.append(
                    .success(try await apply(save.request, versions: save.versions, with: writer, grouped: true)))
            } catch {
                // Unsent, the savepoint has nothing to undo: the save wrote nothing. (Taken either way,
                // so that a failing transaction is seen as begun, and rolled back.)
                let unsent = session.opening.take() != nil
                guard Self.isOwnFailure(error) else { throw error }
                if !unsent { try await session.execute("ROLLBACK TO SAVEPOINT \(savepoint)") }
                outcomes.append(.failure(ModelStoreErrors.translate(error, doing: "saving", url: database.url)))
            }
        }
        _ = session.opening.take()
        return outcomes
    }

    /// Whether a save of a group failed for what it holds, which it would alone too: a conflict, a
    /// unique index, a missing model, a value the server refuses (SQLSTATE classes 22 and 23).
    /// Anything else (a lost connection, a deadlock, a timeout) is the group's.
    static func isOwnFailure(_ error: any Error) -> Bool {
        if let error = error as? DataStoreError {
            return [
                .conflict, .uniqueConstraintViolation, .notFound, .invalidValue, .denyRuleViolation,
                .relationshipCountViolation,
            ].contains(error.code)
        }
        guard let state = ModelStoreErrors.sqlState(error) else { return false }
        return state.hasPrefix("22") || state.hasPrefix("23")
    }
}

/// The saves of a store waiting to be committed together (see ``PostgreSQLStore/groupsCommits``).
///
/// One group is written at a time, by the task of its first save (its leader), while the others
/// wait; saves that arrive meanwhile queue, and when the group is done its leader hands the queue
/// (up to ``largest`` saves) to the first of them, whose task writes it as the next group.
final class CommitGroups: Sendable {
    /// What a save stores: its result, and the versions of the rows it wrote.
    typealias Saved = (DataStoreSaveChangesResult<DefaultSnapshot>, [PersistentIdentifier: Int64])

    /// A save to commit: the request and the row versions its context read.
    struct Save: Sendable {
        let request: DataStoreSaveChangesRequest<DefaultSnapshot>
        let versions: [PersistentIdentifier: Int64]
    }

    /// What a save that joined is told to do.
    enum Turn: Sendable {
        /// Its group committed (or it failed its own checks): this is its outcome.
        case saved(Result<Saved, any Error>)
        /// Lead a group of itself and these saves, which wait.
        case lead([Waiting])
        /// Its group failed as a whole and committed nothing: save alone.
        case alone
    }

    /// A save waiting for its turn.
    struct Waiting: Sendable {
        let save: Save
        let continuation: CheckedContinuation<Turn, Never>

        /// Tells the save what to do (once).
        func tell(_ turn: Turn) { continuation.resume(returning: turn) }
    }

    /// The most saves of one group: each save of a group is a subtransaction that writes, and a
    /// PostgreSQL backend keeps 64 of those in shared memory before other backends' snapshots slow down.
    static let largest = 32

    private struct State {
        /// Whether a group is being written.
        var busy = false
        var waiting: [Waiting] = []
        var counts = PostgreSQLStore.CommitCounts(saves: 0, transactions: 0)
    }

    private let state = LockedValue(State())
    /// ``PostgreSQLStore/groupsCommits``.
    let enabled: LockedValue<Bool>

    init(enabled: Bool) { self.enabled = LockedValue(enabled) }

    /// The counts so far.
    var counts: PostgreSQLStore.CommitCounts { state.withLock { $0.counts } }

    /// How many saves wait for the group being written to end (for tests).
    var waitingCount: Int { state.withLock { $0.waiting.count } }

    /// Adds committed saves and the transactions that held them (one each by default).
    func count(saves: Int, transactions: Int? = nil) {
        state.withLock {
            $0.counts.saves += saves
            $0.counts.transactions += transactions ?? saves
        }
    }

    /// Joins the group being formed: when no group is being written, the save leads one of itself
    /// at once; otherwise it waits for its turn.
    func join(_ save: Save) async -> Turn {
        await withCheckedContinuation { continuation in
            let leads = state.withLock { state in
                if state.busy {
                    state.waiting.append(Waiting(save: save, continuation: continuation))
                    return false
                }
                state.busy = true
                return true
            }
            if leads { continuation.resume(returning: .lead([])) }
        }
    }

    /// The leader's group is done: the saves that arrived meanwhile become the next group, led by
    /// the first of them; with none, no group is being written.
    func handOff() {
        let next: (Waiting, [Waiting])? = state.withLock { state in
            guard !state.waiting.isEmpty else {
                state.busy = false
                return nil
            }
            let group = state.waiting.prefix(Self.largest)
            state.waiting.removeFirst(group.count)
            return (group.first!, Array(group.dropFirst()))
        }
        if let (leader, others) = next { leader.tell(.lead(others)) }
    }
}
