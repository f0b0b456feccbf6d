/// The identifiers of many models, in order, held as runs of keys where they allow it: what a batch
/// insert and a delete of every model return.
///
/// A batch names models of one entity in one store, and their integer keys are usually consecutive
/// (a store mints a batch's keys one after another, and a table's keys are mostly dense). So the
/// collection keeps the identifiers' ``PersistentIdentifier/Scope`` once and the keys as runs, and builds each
/// ``PersistentIdentifier`` when it is read: a million consecutive keys take a few bytes, where an
/// array of identifiers takes 32 MB. Identifiers of several entities or stores, or with string keys,
/// are kept as an array.
///
/// It is a random-access collection of ``PersistentIdentifier``; `Array(identifiers)` makes an
/// array, and an array literal makes a collection.
public struct PersistentIdentifiers: RandomAccessCollection, Equatable, Sendable, ExpressibleByArrayLiteral {
    /// The position of an identifier.
    public typealias Index = Int
    /// The positions of the identifiers.
    public typealias Indices = Range<Int>

    fileprivate enum Storage: Sendable {
        /// Integer keys of one entity in one store: run `i` starts at key `starts[i]` and ends before
        /// position `ends[i]` of the collection.
        case runs(scope: PersistentIdentifier.Scope, starts: [Int64], ends: [Int])
        /// Any identifiers.
        case list([PersistentIdentifier])
    }

    private var storage: Storage

    /// No identifiers.
    public init() {
        storage = .list([])
    }

    /// The identifiers in `identifiers`, in order, kept as runs where they form them.
    public init(_ identifiers: some Sequence<PersistentIdentifier>) {
        self.init()
        for id in identifiers { append(id) }
    }

    /// The identifiers in the array literal, in order.
    public init(arrayLiteral elements: PersistentIdentifier...) {
        self.init(elements)
    }

    /// The identifiers of the models of `entityName` in the store `storeIdentifier` whose keys are
    /// in `keys`, in ascending order.
    public init(storeIdentifier: String, entityName: String, keys: ClosedRange<Int64>) {
        storage = .runs(
            scope: PersistentIdentifier.Scope(storeIdentifier: storeIdentifier, entityName: entityName),
            starts: [keys.lowerBound], ends: [Int(keys.upperBound - keys.lowerBound) + 1])
    }

    /// The identifiers of the models of `entityName` in the store `storeIdentifier` with the integer
    /// keys in `keys`, in that order; consecutive keys are kept as runs.
    public init(storeIdentifier: String, entityName: String, keys: some Sequence<Int64>) {
        var starts: [Int64] = []
        var ends: [Int] = []
        var next: Int64 = 0
        for key in keys {
            // A run never wraps from `Int64.max` to `Int64.min`.
            if !ends.isEmpty, key == next, key != .min {
                ends[ends.count - 1] += 1
            } else {
                starts.append(key)
                ends.append((ends.last ?? 0) + 1)
            }
            next = key &+ 1
        }
        storage =
            ends.isEmpty
            ? .list([])
            : .runs(
                scope: PersistentIdentifier.Scope(storeIdentifier: storeIdentifier, entityName: entityName),
                starts: starts, ends: ends)
    }

    /// Appends an identifier. A key one past the last one of the same entity and store extends the
    /// last run; any other integer key of that entity and store starts a run; anything else turns
    /// the collection into an array of identifiers.
    public mutating func append(_ id: PersistentIdentifier) {
        switch storage {
        case .list(let list) where list.isEmpty:
            guard !id.isTemporary, case .int(let key) = id.primaryKey else {
                storage = .list([id])
                return
            }
            storage = .runs(scope: id.scope, starts: [key], ends: [1])
        case .list(var list):
            storage = .list([])
            list.append(id)
            storage = .list(list)
        case .runs(let scope, var starts, var ends):
            guard case .int(let key) = id.primaryKey, id.scope == scope else {
                var list = Array(self)
                list.append(id)
                storage = .list(list)
                return
            }
            // Released from `storage` first, so the arrays are appended to in place.
            storage = .list([])
            let last = ends.count - 1
            let count = ends[last]
            let length = count - (last == 0 ? 0 : ends[last - 1])
            if starts[last] &+ Int64(length) == key, key != .min {
                ends[last] = count + 1
            } else {
                starts.append(key)
                ends.append(count + 1)
            }
            storage = .runs(scope: scope, starts: starts, ends: ends)
        }
    }

    /// Appends the identifiers of the models of `entityName` in the store `storeIdentifier` whose
    /// keys are in `keys`, in ascending order: one run, joined to the last one if it follows it.
    public mutating func append(storeIdentifier: String, entityName: String, keys: ClosedRange<Int64>) {
        let scope = PersistentIdentifier.Scope(storeIdentifier: storeIdentifier, entityName: entityName)
        switch storage {
        case .list(let list) where list.isEmpty:
            self = PersistentIdentifiers(storeIdentifier: storeIdentifier, entityName: entityName, keys: keys)
        case .runs(scope, var starts, var ends):
            storage = .list([])
            let last = ends.count - 1
            let length = ends[last] - (last == 0 ? 0 : ends[last - 1])
            if starts[last] &+ Int64(length) == keys.lowerBound, keys.lowerBound != .min {
                ends[last] += keys.count
            } else {
                starts.append(keys.lowerBound)
                ends.append(ends[last] + keys.count)
            }
            storage = .runs(scope: scope, starts: starts, ends: ends)
        default:
            for key in keys { append(scope.identifier(key)) }
        }
    }

    /// The runs of consecutive integer keys, in order, when every identifier belongs to one entity
    /// in one store and has an integer key; otherwise `nil`. A store that records a batch by key
    /// ranges (a history row, a log record) reads them instead of every identifier.
    public var keyRuns: (storeIdentifier: String, entityName: String, keys: [ClosedRange<Int64>])? {
        guard case .runs(let scope, let starts, let ends) = storage else { return nil }
        var runs: [ClosedRange<Int64>] = []
        runs.reserveCapacity(starts.count)
        var previous = 0
        for run in starts.indices {
            runs.append(starts[run]...(starts[run] + Int64(ends[run] - previous - 1)))
            previous = ends[run]
        }
        return (scope.storeIdentifier ?? "", scope.entityName, runs)
    }

    /// The identifiers in an array, built a run at a time (faster than `Array(_:)`, which reads
    /// them one by one through the iterator).
    var array: [PersistentIdentifier] {
        switch storage {
        case .list(let list):
            return list
        case .runs(let scope, let starts, let ends):
            // Written in place: appending checks the capacity and uniqueness for every element.
            return [PersistentIdentifier](unsafeUninitializedCapacity: ends.last ?? 0) { buffer, count in
                var previous = 0
                for run in starts.indices {
                    var key = starts[run]
                    for position in previous..<ends[run] {
                        (buffer.baseAddress! + position).initialize(to: scope.identifier(key))
                        key &+= 1
                    }
                    previous = ends[run]
                }
                count = previous
            }
        }
    }

    /// The position of the first identifier: 0.
    public var startIndex: Int { 0 }

    /// The number of identifiers.
    public var endIndex: Int {
        switch storage {
        case .runs(_, _, let ends): ends.last ?? 0
        case .list(let list): list.count
        }
    }

    /// The identifier at `position`.
    public subscript(position: Int) -> PersistentIdentifier {
        switch storage {
        case .list(let list):
            return list[position]
        case .runs(let scope, let starts, let ends):
            precondition(position >= 0 && position < (ends.last ?? 0), "identifier position out of range")
            // The run holding `position`: the first whose end is past it.
            let run = ends.count == 1 ? 0 : ends.partitioningIndex { $0 > position }
            let offset = position - (run == 0 ? 0 : ends[run - 1])
            return scope.identifier(starts[run] + Int64(offset))
        }
    }

    /// Reads the identifiers in order, a run at a time.
    public func makeIterator() -> Iterator {
        Iterator(storage: storage)
    }

    /// Reads the identifiers of a ``PersistentIdentifiers`` in order.
    public struct Iterator: IteratorProtocol {
        // The storage's parts, unpacked once rather than matched for every identifier.
        private let list: [PersistentIdentifier]
        private let scope: PersistentIdentifier.Scope?
        private let starts: [Int64]
        private let ends: [Int]
        private var position = 0
        private var run = 0

        fileprivate init(storage: Storage) {
            switch storage {
            case .list(let list):
                (self.list, scope, starts, ends) = (list, nil, [], [])
            case .runs(let scope, let starts, let ends):
                (list, self.scope, self.starts, self.ends) = ([], scope, starts, ends)
            }
        }

        /// The next identifier, or `nil` after the last.
        public mutating func next() -> PersistentIdentifier? {
            if run < ends.count, let scope {
                let key = starts[run] + Int64(position - (run == 0 ? 0 : ends[run - 1]))
                position += 1
                if position == ends[run] { run += 1 }
                return scope.identifier(key)
            }
            guard position < list.count else { return nil }
            position += 1
            return list[position - 1]
        }
    }

    /// Whether both hold the same identifiers in the same order, however each keeps them.
    public static func == (lhs: Self, rhs: Self) -> Bool {
        if case .runs(let scope1, let starts1, let ends1) = lhs.storage,
            case .runs(let scope2, let starts2, let ends2) = rhs.storage
        {
            return scope1 == scope2 && starts1 == starts2 && ends1 == ends2
        }
        return lhs.elementsEqual(rhs)
    }
}

extension PersistentIdentifiers: CustomStringConvertible {
    /// The identifiers as a list: `[User(store:1), User(store:2)]`, with runs of over three keys
    /// shortened to their ends: `User(store:1...1000)`.
    public var description: String {
        guard let (storeIdentifier, entityName, runs) = keyRuns else {
            return "[" + map(\.description).joined(separator: ", ") + "]"
        }
        let parts = runs.flatMap { run -> [String] in
            run.count > 3
                ? ["\(entityName)(\(storeIdentifier):\(run.lowerBound)...\(run.upperBound))"]
                : run.map { "\(entityName)(\(storeIdentifier):\($0))" }
        }
        return "[" + parts.joined(separator: ", ") + "]"
    }
}
