import Foundation
import ModelStore
import ModelStoreAdapters
import ModelStorePostgreSQL

// The stores the studio's tests and its speed script browse, and the changes "another process"
// makes to them:
//   studio-fixture demo URL            120 people in 4 cities, with visits, and 5 vehicles of a class
//                                      hierarchy (Vehicle, Car, Truck, TowTruck)
//   studio-fixture bulk URL N          N people, no relationships, inserted in one batch
//   studio-fixture set-age URL NAME N  sets a person's age, as author 'fixture'
//   studio-fixture add URL NAME AGE    adds a person, as author 'fixture'

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("studio-fixture: \(message)\n".utf8))
    exit(2)
}

let arguments = Array(CommandLine.arguments.dropFirst())
guard arguments.count >= 2 else { fail("usage: studio-fixture demo|bulk|set-age|add URL …") }
let schema = Schema([Person.self, City.self, Visit.self, Vehicle.self, Car.self, Truck.self, TowTruck.self])
// `postgres://` URLs too, for the browser test on PostgreSQL.
StoreRegistry.shared.registerPostgreSQLSchemes()

do {
    let container = try ModelContainer(for: schema, url: arguments[1])
    let context = ModelContext(container)
    context.author = "fixture"
    switch arguments[0] {
    case "demo":
        let cities = [("Rome", "Italy"), ("Oslo", "Norway"), ("Lima", "Peru"), ("Kyoto", "Japan")].map {
            name, country in
            let city = City()
            city.name = name
            city.country = country
            context.insert(city)
            return city
        }
        var people: [Person] = []
        let first = ["Ada", "Alan", "Grace", "Edsger", "Barbara", "Donald", "Frances", "Ken", "Radia", "Tony"]
        let last = ["Lovelace", "Turing", "Hopper", "Dijkstra", "Liskov", "Knuth", "Allen", "Thompson"]
        for index in 0..<120 {
            let person = Person()
            person.name = "\(first[index % first.count]) \(last[index % last.count]) \(index)"
            person.age = 18 + (index * 7) % 70
            person.email = index % 5 == 0 ? nil : "p\(index)@example.org"
            person.joined = Date(timeIntervalSince1970: 1_600_000_000 + Double(index) * 86_400)
            person.score = Double(index % 13) / 4
            context.insert(person)
            people.append(person)
            person.city = cities[index % cities.count]
            for visit in 0..<(index % 3) {
                let record = Visit()
                record.place = ["Museum", "Park", "Harbour"][visit]
                record.rating = 1 + (index + visit) % 5
                context.insert(record)
                record.person = person
            }
        }
        let bike = Vehicle()
        bike.wheels = 2
        let cars = [Car(), Car()]
        cars[1].seats = 7
        let truck = Truck()
        truck.payload = 12
        let tow = TowTruck()
        tow.payload = 3
        tow.hookRating = 9
        let vehicles: [Vehicle] = [bike, cars[0], cars[1], truck, tow]
        for (index, vehicle) in vehicles.enumerated() {
            vehicle.plate = ["B-1", "C-1", "C-2", "T-1", "T-2"][index]
            if vehicle is Truck { vehicle.wheels = 6 }
            context.insert(vehicle)
            vehicle.owner = people[index]
        }
        try context.save()
    case "bulk":
        guard arguments.count == 3, let count = Int(arguments[2]) else { fail("usage: studio-fixture bulk URL N") }
        let start = Date()
        try context.insert(
            Person.self,
            rows: (0..<count).lazy.map { index -> [BatchAssignment<Person>] in
                [
                    .set(\.name, to: String(format: "person %07d", index)), .set(\.age, to: index % 100),
                    .set(\.email, to: "p\(index)@example.org"), .set(\.score, to: Double(index % 1000) / 10),
                ]
            })
        print("inserted \(count) people in \(String(format: "%.1f", Date().timeIntervalSince(start))) s")
    case "set-age", "add":
        guard arguments.count == 4, let age = Int(arguments[3]) else {
            fail("usage: studio-fixture \(arguments[0]) URL NAME AGE")
        }
        let name = arguments[2]
        if arguments[0] == "add" {
            let person = Person()
            person.name = name
            person.age = age
            context.insert(person)
        } else {
            let people = try context.fetch(FetchDescriptor<Person>(predicate: #Predicate { $0.name == name }))
            guard let person = people.first else { fail("no person named '\(name)'") }
            person.age = age
        }
        try context.save()
    default:
        fail("unknown command '\(arguments[0])'")
    }
} catch {
    fail("\(error)")
}
