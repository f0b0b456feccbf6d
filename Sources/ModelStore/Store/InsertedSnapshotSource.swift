import Foundation

/// The inserted snapshots of a save request that a context makes from its models on demand, a
/// chunk at a time, instead of holding them all (see ``DataStoreSaveChangesRequest/forEachInsertedChunk(_:)``).
///
/// A reader of ``DataStoreSaveChangesRequest/inserted`` gets them all in one array, built on its
/// first read and kept (shared by the request's copies); a reader of the chunks gets each chunk
/// built anew, so a large insert's snapshots never all sit in memory.
///
/// Building a chunk cannot fail: a context makes a source only for models whose values are read in
/// line (see `ModelContext.Changes.insertsInChunks`), and checks their types before.
final class InsertedSnapshotSource<Snapshot: DataStoreSnapshot>: @unchecked Sendable {
    // Safety: `make` reads the saving context's models, which are not Sendable. It runs only while
    // the context's save calls the store (the context's thread is then inside that call, so nothing
    // else touches the models). When the store kept a copy of the request, the context builds
    // ``all`` once the call has returned, before it changes the models
    // (`DataStoreSaveChangesRequest.releaseInserted()`), so a later read of that copy finds the
    // array made. `cached` is read and written only under `lock`.
    private let make: (Range<Int>) -> [Snapshot]
    /// Makes the values of a range of positions as rows, for a source whose snapshots are all of one
    /// entity; `nil` otherwise.
    private let makeRows: ((Range<Int>) -> BatchRows)?
    private let lock = NSLock()
    private var cached: [Snapshot]?
    /// How many snapshots the source yields.
    let count: Int
    /// How many snapshots a chunk holds (the last one may hold fewer).
    let chunkSize: Int

    /// A source of `count` snapshots, `make` building those of a range of positions, and `makeRows`
    /// (when every snapshot is of one entity) their values as rows, with no snapshot.
    init(
        count: Int, chunkSize: Int, make: @escaping (Range<Int>) -> [Snapshot],
        makeRows: ((Range<Int>) -> BatchRows)? = nil
    ) {
        precondition(chunkSize > 0, "a chunk holds at least one snapshot")
        self.count = count
        self.chunkSize = chunkSize
        self.make = make
        self.makeRows = makeRows
    }

    /// Every snapshot, in order, built on the first call and kept.
    var all: [Snapshot] {
        lock.lock()
        defer { lock.unlock() }
        if let cached { return cached }
        let all = make(0..<count)
        cached = all
        return all
    }

    /// Whether ``all`` has been built.
    var isBuilt: Bool {
        lock.lock()
        defer { lock.unlock() }
        return cached != nil
    }

    /// Calls `body` with each chunk in order, each built when `body` has returned from the one
    /// before; with ``all`` in one call when it is built already.
    func forEachChunk(_ body: ([Snapshot]) throws -> Void) rethrows {
        lock.lock()
        let built = cached
        lock.unlock()
        if let built {
            if !built.isEmpty { try body(built) }
            return
        }
        for start in stride(from: 0, to: count, by: chunkSize) {
            try body(make(start..<min(start + chunkSize, count)))
        }
    }

    /// A function returning the next chunk on each call, and an empty array after the last: for a
    /// reader that pulls its chunks (a batch insert).
    func chunkPuller() -> () -> [Snapshot] {
        var next = 0
        var built: [Snapshot]?? = nil
        return { [self] in
            if built == nil {
                lock.lock()
                built = .some(cached)
                lock.unlock()
            }
            if let all = built ?? nil {
                defer { next = count }
                return next < count ? all : []
            }
            guard next < count else { return [] }
            let range = next..<min(next + chunkSize, count)
            next = range.upperBound
            return make(range)
        }
    }

    /// A function returning the next chunk's rows on each call, and an empty chunk (of an empty
    /// range) after the last, for a reader that takes values (a batch insert from rows); `nil` when
    /// the source makes no rows, or its snapshots were built already (they are then what every
    /// reader gets).
    func rowPuller() -> (() -> BatchRows)? {
        guard let makeRows, !isBuilt else { return nil }
        var next = 0
        return { [self] in
            let range = next..<min(next + chunkSize, count)
            next = range.upperBound
            return makeRows(range)
        }
    }
}
