import Foundation
import ModelStore

/// An account: a key the workload chooses, a name, and the total of its entries' amounts.
final class CrashAccount: PersistentModel {
    @Attribute(.unique) var key: Int = 0
    @Attribute var name: String = ""
    @Attribute var total: Int = 0
    /// Deleting an account deletes its entries.
    @Relationship(deleteRule: .cascade, inverse: \CrashEntry.account) var entries: [CrashEntry] = []

    let persistentBackingData = BackingData()
    init() {}
}

/// An entry of an account.
final class CrashEntry: PersistentModel {
    @Attribute(.unique) var key: Int = 0
    @Attribute var amount: Int = 0
    @Attribute var note: String = ""
    @Relationship var account: CrashAccount?

    let persistentBackingData = BackingData()
    init() {}
}

/// The number of the last transaction the store holds: every transaction sets it.
final class CrashMeta: PersistentModel {
    @Attribute(.unique) var key: Int = 0
    @Attribute var lastTransaction: Int = 0

    let persistentBackingData = BackingData()
    init() {}
}

/// The schema of the crash test.
let crashSchema = Schema(CrashAccount.self, CrashEntry.self, CrashMeta.self)
