import Foundation
import ModelStoreMacros

/// One "simple user"'s values, which both models are made from.
struct UserRow: Sendable {
    var name: String
    var age: Int
    var email: String
    var joined: Date
    var score: Double

    /// `count` users from a fixed seed, so every run measures the same data.
    static func make(count: Int) -> [UserRow] {
        let names = ["Ada", "Alan", "Alice", "Ben", "Carla", "Chen", "Dana", "Elena", "Jane", "Omar", "Priya", "Yuki"]
        var state: UInt64 = 0x5EED_0F_0DE1_5702
        func next() -> UInt64 {
            // SplitMix64.
            state &+= 0x9E37_79B9_7F4A_7C15
            var mixed = state
            mixed = (mixed ^ (mixed >> 30)) &* 0xBF58_476D_1CE4_E5B9
            mixed = (mixed ^ (mixed >> 27)) &* 0x94D0_49BB_1331_11EB
            return mixed ^ (mixed >> 31)
        }
        return (0..<count).map { index in
            UserRow(
                name: names[Int(next() % UInt64(names.count))], age: 18 + Int(next() % 73),
                email: "user\(index)@example.com",
                joined: Date(timeIntervalSinceReferenceDate: Double(next() % (20 * 365 * 86_400))),
                score: Double(next() % 100_000) / 100)
        }
    }
}

/// What the workloads need of a user model, whichever way it is written.
protocol BenchUser: PersistentModel {
    /// A model with a row's values, not yet inserted.
    init(_ row: UserRow)
    var age: Int { get }
    var email: String { get }
}

/// The simple user as the main benchmarks write it by hand (`Benchmarks/Sources/ModelStoreBench/Systems/User.swift`):
/// property wrappers with initial values, the framework's `init()`, and a convenience initializer.
final class HandWrittenUser: PersistentModel, BenchUser {
    @ModelStore.Attribute var name: String = ""
    @ModelStore.Attribute var age: Int = 0
    @ModelStore.Attribute(.unique) var email: String = ""
    @ModelStore.Attribute var joined: Date = Date(timeIntervalSinceReferenceDate: 0)
    @ModelStore.Attribute var score: Double = 0

    static var constraints: [ModelConstraint<HandWrittenUser>] { [.index(\.name)] }

    let persistentBackingData = BackingData()
    init() {}

    convenience init(_ row: UserRow) {
        self.init()
        name = row.name
        age = row.age
        email = row.email
        joined = row.joined
        score = row.score
    }
}

/// The same user in SwiftData's spelling: no initial values, an initializer that sets each property.
@Model
final class MacroUser: BenchUser {
    #Index<MacroUser>([\.name])

    var name: String
    var age: Int
    @Attribute(.unique) var email: String
    var joined: Date
    var score: Double

    init(_ row: UserRow) {
        name = row.name
        age = row.age
        email = row.email
        joined = row.joined
        score = row.score
    }
}
