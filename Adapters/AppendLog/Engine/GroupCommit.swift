import Foundation
import ModelStore
import ModelStoreFileIO

/// Makes saves durable: one sync per save, or group commit, where saves that arrive while a sync
/// runs wait for the next one and share it.
///
/// Group commit is leader/follower. A save whose record is not yet durable and finds no sync
/// running becomes the leader: it notes the last record written so far, syncs the segment outside
/// any lock, marks everything up to that record durable and wakes the waiting saves. A save that
/// finds a sync running follows: it waits, and when woken either finds its record durable and
/// returns, or leads the next sync (which covers every record written meanwhile). So N saves that
/// arrive together cost about two syncs, not N, and no save returns before its record is durable.
final class GroupCommit: @unchecked Sendable {
    // Safety: every stored property below is read and written only while `condition` is locked,
    // except `beforeSync` and `mark`, which are set once before the store is shared and read-only afterwards.
    private let condition = NSCondition()
    private var written: UInt64 = 0
    private var writtenFile: OpenFile?
    private var durable: UInt64 = 0
    private var syncing = false
    private var failure: DataStoreError?
    private var syncs = 0

    /// A hook tests use to hold a sync until other saves have written their records.
    /// Called by the leader with the number of the last record its sync will cover.
    var beforeSync: (@Sendable (UInt64) -> Void)?

    /// Where each sync that returns is recorded (see ``SyncedMark``).
    var mark: SyncedMarkFile?

    /// A coordinator whose log already holds `durable` durable transactions.
    init(durable: UInt64) {
        self.durable = durable
        self.written = durable
    }

    /// How many syncs have made records durable.
    var syncCount: Int {
        condition.lock()
        defer { condition.unlock() }
        return syncs
    }

    /// Records that transaction `number` has been written to `file`. Call in transaction order.
    func noteWritten(_ number: UInt64, file: OpenFile) {
        condition.lock()
        written = number
        writtenFile = file
        condition.unlock()
    }

    /// Drops the reference to the last segment written, so a closed store keeps no file open.
    func releaseFile() {
        condition.lock()
        if !syncing { writtenFile = nil }
        condition.unlock()
    }

    /// Records that every transaction up to `number` is durable (after a roll synced its segment).
    func markDurable(through number: UInt64, countingSync: Bool) {
        condition.lock()
        durable = max(durable, number)
        mark?.record(durable)
        if countingSync { syncs += 1 }
        condition.broadcast()
        condition.unlock()
    }

    /// Syncs `file` for transaction `number` alone: the ``AppendLogStoreConfiguration/Durability/everySave`` mode.
    func syncAlone(_ number: UInt64, file: OpenFile) throws {
        beforeSync?(number)
        do {
            try file.sync()
        } catch let error as DataStoreError {
            fail(error)
            throw error
        }
        markDurable(through: number, countingSync: true)
    }

    /// Returns once transaction `number` is durable, leading or following a group sync.
    func waitUntilDurable(_ number: UInt64) throws {
        condition.lock()
        defer { condition.unlock() }
        while true {
            if let failure { throw failure }
            if durable >= number { return }
            if syncing {
                condition.wait()
                continue
            }
            syncing = true
            let target = written
            let file = writtenFile
            condition.unlock()
            beforeSync?(target)
            var syncError: DataStoreError?
            do {
                try file?.sync()
            } catch let failure as DataStoreError {
                syncError = failure
            } catch {
                syncError = DataStoreError(.io, "syncing the log failed", underlyingError: error)
            }
            condition.lock()
            syncing = false
            if let syncError {
                failure = syncError
            } else {
                durable = max(durable, target)
                mark?.record(durable)
                syncs += 1
            }
            condition.broadcast()
        }
    }

    /// Makes every waiting and future save fail with `error`: after a failed sync the log's state
    /// on disk is unknown, as after a crash, and the store must be reopened.
    func fail(_ error: DataStoreError) {
        condition.lock()
        if failure == nil { failure = error }
        condition.broadcast()
        condition.unlock()
    }
}
