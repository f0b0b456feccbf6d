import Foundation
import ModelStore
import Testing

/// A school whose students say which school they attend, with no inverse named on either side.
final class School: PersistentModel {
    @Attribute var name: String = ""
    @Relationship var students: [Student] = []

    let persistentBackingData = BackingData()
    init() {}
    convenience init(_ name: String) {
        self.init()
        self.name = name
    }
}

/// A student of at most one school.
final class Student: PersistentModel {
    @Attribute var name: String = ""
    @Relationship var school: School?

    let persistentBackingData = BackingData()
    init() {}
    convenience init(_ name: String) {
        self.init()
        self.name = name
    }
}

/// Two relationships from one type to another: which pairs with the other side cannot be told.
final class Match: PersistentModel {
    @Relationship var home: Club?
    @Relationship var away: Club?

    let persistentBackingData = BackingData()
    init() {}
}

/// The other side of the two relationships of ``Match``.
final class Club: PersistentModel {
    @Relationship var matches: [Match] = []

    let persistentBackingData = BackingData()
    init() {}
}

/// A relationship of a type to itself, never paired by inference.
final class Employee: PersistentModel {
    @Relationship var manager: Employee?
    @Relationship var reports: [Employee] = []

    let persistentBackingData = BackingData()
    init() {}
}

/// SwiftData's inferred inverse: a relationship that names no inverse is paired with the only
/// relationship back, when that one names none either and the pair is unambiguous.
struct InferredInverseTests {
    @Test func theOnlyRelationshipsEachWayArePaired() throws {
        let schema = Schema([School.self, Student.self])
        #expect(schema.entity(named: "School")?.relationship(named: "students")?.inverseName == "school")
        #expect(schema.entity(named: "Student")?.relationship(named: "school")?.inverseName == "students")
        // In memory at once, before any insert, as with a declared inverse.
        let school = School("Hilltop")
        let ada = Student("Ada")
        ada.school = school
        #expect(school.students.map(\.name) == ["Ada"])
        let grace = Student("Grace")
        school.students.append(grace)
        #expect(grace.school === school)
    }

    @Test(arguments: StoreKind.allCases)
    func theInferredPairIsStoredAndReadBackFromEitherSide(_ kind: StoreKind) throws {
        let store = try StoreUnderTest(kind, types: [School.self, Student.self])
        do {
            let context = ModelContext(store.container)
            let school = School("Hilltop")
            context.insert(school)
            for name in ["Ada", "Grace"] {
                let student = Student(name)
                student.school = school
                context.insert(student)
            }
            try context.save()
        }
        let context = ModelContext(try store.reopen())
        let school = try #require(try context.fetch(FetchDescriptor<School>()).first)
        #expect(school.students.map(\.name).sorted() == ["Ada", "Grace"])
        let ada = try #require(
            try context.fetch(FetchDescriptor<Student>(predicate: #Predicate { $0.name == "Ada" })).first)
        ada.school = nil
        try context.save()
        let again = ModelContext(try store.reopen())
        #expect(try again.fetch(FetchDescriptor<School>()).first?.students.map(\.name) == ["Grace"])
        let onBoard = try again.fetch(FetchDescriptor<Student>(predicate: #Predicate { $0.school?.name == "Hilltop" }))
        #expect(onBoard.map(\.name) == ["Grace"])
    }

    @Test func anAmbiguousPairOrATypeRelatedToItselfIsNotPaired() throws {
        let clubs = Schema([Match.self, Club.self])
        #expect(clubs.entity(named: "Match")?.relationship(named: "home")?.inverseName == nil)
        #expect(clubs.entity(named: "Match")?.relationship(named: "away")?.inverseName == nil)
        #expect(clubs.entity(named: "Club")?.relationship(named: "matches")?.inverseName == nil)
        let club = Club()
        let match = Match()
        match.home = club
        #expect(club.matches.isEmpty, "no inverse: the two sides stay apart")

        let staff = Schema([Employee.self])
        #expect(staff.entity(named: "Employee")?.relationship(named: "manager")?.inverseName == nil)
        #expect(staff.entity(named: "Employee")?.relationship(named: "reports")?.inverseName == nil)
    }

    @Test func aDeclaredPairLeavesASecondPairBetweenTheSameTypesUnpaired() throws {
        let schema = Schema([Library.self, Book.self])
        #expect(schema.entity(named: "Library")?.relationship(named: "books")?.inverseName == "library")
        #expect(schema.entity(named: "Book")?.relationship(named: "library")?.inverseName == "books")
        // Two relationships each way: the undeclared ones could pair with either, so they stay apart.
        #expect(schema.entity(named: "Library")?.relationship(named: "featured")?.inverseName == nil)
        #expect(schema.entity(named: "Book")?.relationship(named: "featuredIn")?.inverseName == nil)
    }
}

/// A library whose books declare their inverse, and one featured book that does not.
final class Library: PersistentModel {
    @Relationship(inverse: \Book.library) var books: [Book] = []
    @Relationship var featured: Book?

    let persistentBackingData = BackingData()
    init() {}
}

/// A book of a library, which may be featured in another.
final class Book: PersistentModel {
    @Relationship var library: Library?
    @Relationship var featuredIn: Library?

    let persistentBackingData = BackingData()
    init() {}
}
