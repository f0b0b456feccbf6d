import Foundation
import ModelStore

/// A "simple user" as a ModelStore model: unique email, an index on name.
final class User: PersistentModel {
    @Attribute var name: String = ""
    @Attribute var age: Int = 0
    @Attribute(.unique) var email: String = ""
    @Attribute var joined: Date = Date(timeIntervalSinceReferenceDate: 0)
    @Attribute var score: Double = 0

    static var constraints: [ModelConstraint<User>] { [.index(\.name)] }

    let persistentBackingData = BackingData()
    init() {}

    /// A model with a row's values, not yet inserted.
    convenience init(_ row: UserRow) {
        self.init()
        name = row.name
        age = row.age
        email = row.email
        joined = row.joined
        score = row.score
    }
}

/// The descriptors every ModelStore-shaped system runs, written once so they are identical.
enum UserQueries {
    /// `name == "Jane"`, sorted by age.
    static func indexed() -> FetchDescriptor<User> {
        let name = Dataset.indexedName
        return FetchDescriptor(predicate: #Predicate<User> { $0.name == name }, sortBy: [SortDescriptor(\.age)])
    }

    /// One user by unique email.
    static func unique(email: String) -> FetchDescriptor<User> {
        var descriptor = FetchDescriptor(predicate: #Predicate<User> { $0.email == email })
        descriptor.fetchLimit = 1
        return descriptor
    }

    /// The three-condition scan: age, score and joined date, none indexed.
    static func scan() -> FetchDescriptor<User> {
        FetchDescriptor(predicate: scanPredicate())
    }

    /// The scan's predicate.
    static func scanPredicate() -> Predicate<User> {
        let age = Dataset.scanMinimumAge
        let score = Dataset.scanMinimumScore
        let joined = Dataset.scanJoinedBefore
        return #Predicate<User> { $0.age >= age && $0.score >= score && $0.joined < joined }
    }

    /// The batch-insert row of a user.
    static func assignments(_ row: UserRow) -> [BatchAssignment<User>] {
        [
            .set(\.name, to: row.name), .set(\.age, to: row.age), .set(\.email, to: row.email),
            .set(\.joined, to: row.joined), .set(\.score, to: row.score),
        ]
    }
}
