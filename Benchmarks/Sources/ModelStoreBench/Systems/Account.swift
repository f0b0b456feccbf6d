import Foundation
import ModelStore

// The class-hierarchy workloads: the same rows stored once as a hierarchy of four model classes
// (one entity with a class attribute) and once as one flat model with the same columns.

/// The root of the benchmark's class hierarchy: a user's five attributes, as ``User`` has them.
class Account: PersistentModel {
    @Attribute var name: String = ""
    @Attribute var age: Int = 0
    @Attribute(.unique) var email: String = ""
    @Attribute var joined: Date = Date(timeIntervalSinceReferenceDate: 0)
    @Attribute var score: Double = 0

    let persistentBackingData = BackingData()
    required init() {}
}

/// An account that buys: two attributes of its own.
final class Customer: Account {
    @Attribute var tier: Int = 0
    @Attribute var credit: Double = 0
}

/// An account that works here: two attributes of its own, and a subclass.
class Employee: Account {
    @Attribute var department: String = ""
    @Attribute var salary: Double = 0
}

/// An employee with reports: the hierarchy's third level, one attribute of its own.
final class Manager: Employee {
    @Attribute var reports: Int = 0
}

/// Every attribute of the hierarchy in one final model, those of the subclasses optional: the
/// entity a hierarchy's fetch is compared with.
final class FlatAccount: PersistentModel {
    @Attribute var name: String = ""
    @Attribute var age: Int = 0
    @Attribute(.unique) var email: String = ""
    @Attribute var joined: Date = Date(timeIntervalSinceReferenceDate: 0)
    @Attribute var score: Double = 0
    @Attribute var tier: Int?
    @Attribute var credit: Double?
    @Attribute var department: String?
    @Attribute var salary: Double?
    @Attribute var reports: Int?

    let persistentBackingData = BackingData()
    init() {}
}

/// The hierarchy's rows: which class each user of a ``Dataset`` is, its own values, and the answers.
///
/// Row `i` is an `Account` when `i % 4 == 0`, a `Customer` at 1, an `Employee` at 2 and a
/// `Manager` at 3, so every class holds a quarter of the rows, interleaved in insertion order.
enum Hierarchy {
    /// The classes in the order of `i % 4`.
    enum Kind: Int, CaseIterable {
        case account, customer, employee, manager
    }

    /// The model types of the hierarchy, for a container's schema.
    static let types: [any PersistentModel.Type] = [Account.self, Customer.self, Employee.self, Manager.self]

    static func kind(_ index: Int) -> Kind { Kind(rawValue: index % 4)! }
    static func tier(_ index: Int) -> Int { index % 5 }
    static func credit(_ index: Int) -> Double { Double(index % 1_000) }
    static func department(_ index: Int) -> String { Dataset.firstNames[index % Dataset.firstNames.count] + " team" }
    static func salary(_ index: Int) -> Double { Double(30_000 + index % 70_000) }
    static func reports(_ index: Int) -> Int { 1 + index % 12 }

    /// The hierarchy's model of row `index`, not yet inserted.
    static func model(_ row: UserRow, index: Int) -> Account {
        let account: Account
        switch kind(index) {
        case .account: account = Account()
        case .customer:
            let customer = Customer()
            customer.tier = tier(index)
            customer.credit = credit(index)
            account = customer
        case .employee, .manager:
            let employee: Employee
            if kind(index) == .manager {
                let manager = Manager()
                manager.reports = reports(index)
                employee = manager
            } else {
                employee = Employee()
            }
            employee.department = department(index)
            employee.salary = salary(index)
            account = employee
        }
        account.name = row.name
        account.age = row.age
        account.email = row.email
        account.joined = row.joined
        account.score = row.score
        return account
    }

    /// The flat model of row `index`, with the values its class's model has and `nil` for the rest.
    static func flatModel(_ row: UserRow, index: Int) -> FlatAccount {
        let flat = FlatAccount()
        flat.name = row.name
        flat.age = row.age
        flat.email = row.email
        flat.joined = row.joined
        flat.score = row.score
        switch kind(index) {
        case .account: break
        case .customer:
            flat.tier = tier(index)
            flat.credit = credit(index)
        case .employee, .manager:
            flat.department = department(index)
            flat.salary = salary(index)
            if kind(index) == .manager { flat.reports = reports(index) }
        }
        return flat
    }

    /// What a fetch of the hierarchy or the flat entity adds up to, to check against the data.
    struct Totals: Equatable, CustomStringConvertible {
        var count = 0
        var ages = 0
        var customers = 0
        var tiers = 0
        var employees = 0
        var salaries = 0.0
        var managers = 0
        var reports = 0

        var description: String {
            "\(count) rows (\(customers) customers, \(employees) employees of which \(managers) managers), "
                + "ages \(ages), tiers \(tiers), salaries \(salaries), reports \(reports)"
        }
    }

    /// The totals of the rows whose class passes `include`, computed from the data.
    static func expected(_ data: Dataset, include: (Kind) -> Bool = { _ in true }) -> Totals {
        var totals = Totals()
        for (index, row) in data.rows.enumerated() where include(kind(index)) {
            totals.count += 1
            totals.ages += row.age
            switch kind(index) {
            case .account: break
            case .customer:
                totals.customers += 1
                totals.tiers += tier(index)
            case .employee, .manager:
                totals.employees += 1
                totals.salaries += salary(index)
                if kind(index) == .manager {
                    totals.managers += 1
                    totals.reports += reports(index)
                }
            }
        }
        return totals
    }

    /// The totals of fetched hierarchy models, each counted by the class it was fetched as.
    static func totals(_ accounts: [Account]) -> Totals {
        totals(accounts) { account in
            let (customer, employee) = (account as? Customer, account as? Employee)
            return (account.age, customer?.tier, employee?.salary, (account as? Manager)?.reports)
        }
    }

    /// The totals of fetched flat models, each counted by the values it holds.
    static func totals(_ flats: [FlatAccount]) -> Totals {
        totals(flats) { ($0.age, $0.tier, $0.salary, $0.reports) }
    }

    /// The totals of fetched models from each one's age and its subclass values (`nil` where its class has none).
    private static func totals<Model>(
        _ models: [Model], _ values: (Model) -> (age: Int, tier: Int?, salary: Double?, reports: Int?)
    ) -> Totals {
        var totals = Totals()
        for model in models {
            let (age, tier, salary, reports) = values(model)
            totals.count += 1
            totals.ages += age
            if let tier {
                totals.customers += 1
                totals.tiers += tier
            }
            if let salary {
                totals.employees += 1
                totals.salaries += salary
            }
            if let reports {
                totals.managers += 1
                totals.reports += reports
            }
        }
        return totals
    }

    /// Checks a fetch's totals: the count on every repetition, everything on the first.
    static func check(_ totals: Totals, expected: Totals, repetition: Int, _ workload: Workload) throws {
        try Expect.count(totals.count, expected.count, workload.rawValue)
        if repetition == 0 && totals != expected {
            throw WrongResult("\(workload.rawValue): got \(totals), expected \(expected)")
        }
    }
}
