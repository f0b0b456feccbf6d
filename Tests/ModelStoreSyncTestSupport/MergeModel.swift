import Foundation

/// The documented merge over plain dictionaries: what each replica and the shared store should hold.
/// Clashes go the remote's way (the policy the randomized test sets); an edit beats a delete.
public struct MergeModel {
    /// A journey's attributes.
    public struct Values: Equatable {
        /// The budget.
        public var budget: Int
        /// The notes.
        public var notes: String
    }

    /// What each replica holds, by name.
    public var local: [[String: Values]]
    /// The values each replica last agreed on with the shared store; a key with `nil` is a model
    /// that will be pushed as new.
    var base: [[String: Values?]]
    /// Models each replica deleted and has not pushed.
    var deleted: [Set<String>]
    var cursor: [Int]
    /// Whether the replica synced before (a first round pulls first, whatever started it).
    var synced: [Bool]
    /// The clashes each replica met: every one must be in its conflict records.
    public var conflicts: [Int]
    /// What the shared store holds, by name.
    public var server: [String: Values] = [:]
    /// Which replica wrote which model, in order.
    var log: [(writer: Int, name: String)] = []

    /// The model of `replicas` empty replicas and an empty shared store.
    public init(replicas: Int) {
        local = Array(repeating: [:], count: replicas)
        base = Array(repeating: [:], count: replicas)
        deleted = Array(repeating: [], count: replicas)
        cursor = Array(repeating: 0, count: replicas)
        synced = Array(repeating: false, count: replicas)
        conflicts = Array(repeating: 0, count: replicas)
    }

    /// The `pick`-th model of a replica in name order, if it has any.
    public func pick(_ r: Int, _ pick: Int) -> String? {
        let names = local[r].keys.sorted()
        return names.isEmpty ? nil : names[pick % names.count]
    }

    /// A replica inserts a journey.
    public mutating func insert(_ r: Int, _ name: String, budget: Int) {
        local[r][name] = Values(budget: budget, notes: "")
    }

    /// A replica deletes a journey.
    public mutating func delete(_ r: Int, _ name: String) {
        local[r][name] = nil
        if case .some(.some) = base[r][name] {
            deleted[r].insert(name)
        } else {
            base[r][name] = nil
        }
    }

    /// A replica runs a round: pull, merge, push, again until the shared store takes the push.
    public mutating func sync(_ r: Int) {
        synced[r] = true
        while true {
            pull(r)
            if push(r) { return }
        }
    }

    /// A replica runs a round that pushes first (one after a local save): push, then pull; a push
    /// the shared store refuses, or a replica that never synced, makes it a round as ``sync(_:)``.
    public mutating func syncPushingFirst(_ r: Int) {
        guard synced[r], push(r) else { return sync(r) }
        pull(r)
    }

    private mutating func pull(_ r: Int) {
        let names = Set(log[cursor[r]...].filter { $0.writer != r }.map(\.name))
        cursor[r] = log.count
        for name in names.sorted() {
            let known = base[r].keys.contains(name)
            guard let remote = server[name] else {
                guard known else { continue }
                if deleted[r].contains(name) {
                    deleted[r].remove(name)
                    base[r][name] = nil
                } else if let mine = local[r][name], base[r][name] != .some(mine) {
                    base[r][name] = .some(nil)  // edit beats delete: pushed again as new
                    conflicts[r] += 1
                } else {
                    local[r][name] = nil
                    base[r][name] = nil
                }
                continue
            }
            if deleted[r].contains(name) {
                if base[r][name] == .some(remote) { continue }
                conflicts[r] += 1  // an edit there beats the delete here
                deleted[r].remove(name)
                local[r][name] = remote
                base[r][name] = .some(remote)
                continue
            }
            guard let mine = local[r][name] else {
                local[r][name] = remote
                base[r][name] = .some(remote)
                continue
            }
            let agreed = base[r][name] ?? nil
            var merged = mine
            merged.budget = Self.merge(agreed?.budget, mine.budget, remote.budget, clashes: &conflicts[r])
            merged.notes = Self.merge(agreed?.notes, mine.notes, remote.notes, clashes: &conflicts[r])
            local[r][name] = merged
            base[r][name] = .some(remote)
        }
    }

    /// One property, three ways: a side that did not change it takes the other's value; a clash
    /// goes the remote's way.
    public static func merge<Value: Equatable>(
        _ agreed: Value?, _ mine: Value, _ theirs: Value, clashes: inout Int
    ) -> Value {
        if mine == theirs { return theirs }
        if let agreed, agreed == mine { return theirs }
        if let agreed, agreed == theirs { return mine }
        clashes += 1
        return theirs
    }

    /// Pushes; `false` when the shared store refused (a model moved on there), after which the
    /// replica pulls and pushes again.
    private mutating func push(_ r: Int) -> Bool {
        var next = server
        var written: [String] = []
        for (name, mine) in local[r].sorted(by: { $0.key < $1.key }) {
            guard case .some(.some(let agreed)) = base[r][name] else {
                if let there = next[name] {
                    if there != mine { return false }
                    continue
                }
                next[name] = mine
                written.append(name)
                continue
            }
            guard var there = next[name] else {
                // Deleted there: a push of other models goes through; one of this model waits.
                if mine == agreed { continue }
                return false
            }
            if mine.budget != agreed.budget && there.budget != mine.budget {
                guard there.budget == agreed.budget else { return false }
                there.budget = mine.budget
            }
            if mine.notes != agreed.notes && there.notes != mine.notes {
                guard there.notes == agreed.notes else { return false }
                there.notes = mine.notes
            }
            if there != next[name] {
                next[name] = there
                written.append(name)
            }
        }
        for name in deleted[r].sorted() where next[name] != nil {
            next[name] = nil
            written.append(name)
        }
        server = next
        log += written.map { (r, $0) }
        // What the replica pushed, and what it left alone as it was agreed: the shared store's
        // other changes to these models arrive with the next pull.
        for name in local[r].keys { base[r][name] = .some(local[r][name]) }
        for name in deleted[r] { base[r][name] = nil }
        deleted[r] = []
        return true
    }
}
