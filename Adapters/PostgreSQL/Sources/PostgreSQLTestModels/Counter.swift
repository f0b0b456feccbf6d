import Foundation
import ModelStore

/// A named counter that processes increment by read-modify-write saves: the model of the
/// multi-process tests and the load test.
public final class Counter: PersistentModel {
    /// The counter's name, unique.
    @Attribute(.unique) public var name: String = ""
    /// The counter's value.
    @Attribute public var value: Int = 0

    /// The model's backing data.
    public let persistentBackingData = BackingData()
    /// An empty counter.
    public init() {}
    /// A counter at zero.
    public convenience init(name: String) {
        self.init()
        self.name = name
    }

    /// The schema of the tests that use counters.
    public static var schema: Schema { Schema([Counter.self]) }
}

/// One read-modify-write increment: fetch the counter, add one, save; a conflict rolls back and
/// tries again. Returns how many attempts ended in a conflict.
public func increment(_ name: String, in container: ModelContainer) throws -> Int {
    var conflicts = 0
    let context = ModelContext(container)
    while true {
        let descriptor = FetchDescriptor<Counter>(predicate: #Predicate { $0.name == name })
        guard let counter = try context.fetch(descriptor).first else {
            throw DataStoreError(.notFound, "there is no counter '\(name)'", remedy: "Create the counters first")
        }
        counter.value += 1
        do {
            try context.save()
            return conflicts
        } catch let error as DataStoreError where error.code == .conflict {
            conflicts += 1
            context.rollback()
        }
    }
}
