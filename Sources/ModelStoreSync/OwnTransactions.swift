import ModelStore

/// The newest run of consecutive local transactions known to be the engine's own, so the push
/// cursor can move past them in a save the engine makes anyway, instead of a later round reading
/// them back from the history (or, once the history was trimmed past the cursor, comparing every
/// model with its base).
///
/// A transaction joins the run only when its number is the one right after the run's last: every
/// number up to it is then accounted for, so no transaction of the app (in this process or
/// another) lies inside the run. Any other number starts a new run. The run lives in memory: after
/// a restart the cursor moves as before, by reading the history.
struct OwnTransactions {
    /// The transaction numbers of the run, or `nil` before the engine knows of one.
    private(set) var run: ClosedRange<Int64>?

    /// Notes a save of the engine that recorded the transaction `token` (`nil` when it recorded
    /// none: it changed nothing, and took no number).
    mutating func saved(_ token: DefaultHistoryToken?) {
        guard let number = token?.transactionNumber else { return }
        if let run, number == run.upperBound + 1 {
            self.run = run.lowerBound...number
        } else {
            run = number...number
        }
    }

    /// Notes that a read of the history found every transaction after `after`, up to the newest
    /// one `head`, to be the engine's own.
    mutating func read(after: Int64, through head: Int64) {
        guard head > after else { return }
        if let run, run.upperBound >= after, run.lowerBound <= head + 1 {
            self.run = min(run.lowerBound, after + 1)...max(run.upperBound, head)
        } else {
            run = (after + 1)...head
        }
    }

    /// Where a push cursor at `pushed` may move: past the run when the run begins right after it
    /// (or before), since nothing in it is the app's.
    func advanced(_ pushed: Int64) -> Int64 {
        guard let run, run.lowerBound <= pushed + 1, run.upperBound > pushed else { return pushed }
        return run.upperBound
    }
}
