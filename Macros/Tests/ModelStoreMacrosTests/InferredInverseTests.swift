import Foundation
import ModelStoreAdapters
import ModelStoreMacros
import Testing

/// The school and student of SwiftData's best-known inferred relationship: no `@Relationship` and
/// no inverse on either side.
@Model
final class School {
    var name: String
    var students: [Student]

    init(name: String, students: [Student] = []) {
        self.name = name
        self.students = students
    }
}

@Model
final class Student {
    var name: String
    var school: School?

    init(name: String, school: School? = nil) {
        self.name = name
        self.school = school
    }
}

/// `@Model` code that leaves the inverse to SwiftData's inference compiles and behaves as there.
struct InferredInverseTests {
    @Test func theTwoSidesAreOneRelationship() throws {
        let schema = Schema([School.self, Student.self])
        #expect(schema.entity(named: "School")?.relationship(named: "students")?.inverseName == "school")
        #expect(schema.entity(named: "Student")?.relationship(named: "school")?.inverseName == "students")

        let container = try ModelContainer(for: School.self, Student.self, url: "sqlite::memory:")
        let context = ModelContext(container)
        let school = School(name: "Hilltop")
        context.insert(school)
        let ada = Student(name: "Ada", school: school)
        context.insert(ada)
        #expect(school.students.map(\.name) == ["Ada"], "setting the student's school adds it to the school")
        try context.save()
        let fetched = try ModelContext(container).fetch(FetchDescriptor<School>())
        #expect(fetched.first?.students.map(\.name) == ["Ada"])
    }
}
