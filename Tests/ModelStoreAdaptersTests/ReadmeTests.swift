import Foundation
import ModelStore
import ModelStoreAdapters
import ModelStoreTestSupport
import Testing

struct ReadmeTests {
    private static let repositoryRoot = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// The lines of the README's first Swift block after the "## Quick Start" heading.
    private func readmeQuickStart() throws -> [String] {
        let readme = try String(contentsOf: Self.repositoryRoot.appendingPathComponent("README.md"), encoding: .utf8)
        let lines = readme.components(separatedBy: "\n")
        let heading = try #require(
            lines.firstIndex { $0.hasPrefix("## Quick Start") }, "README.md has no '## Quick Start'")
        let open = try #require(lines[heading...].firstIndex(of: "```swift"), "the Quick Start has no Swift block")
        let close = try #require(
            lines[(open + 1)...].firstIndex(of: "```"), "the Quick Start's Swift block is not closed")
        return Array(lines[(open + 1)..<close])
    }

    /// The lines between the markers of ReadmeQuickStart.swift.
    private func compiledQuickStart() throws -> [String] {
        let url = Self.repositoryRoot.appendingPathComponent("Tests/ModelStoreAdaptersTests/ReadmeQuickStart.swift")
        let lines = try String(contentsOf: url, encoding: .utf8).components(separatedBy: "\n")
        let begin = try #require(lines.firstIndex(of: "// README quick start: begin"))
        let end = try #require(lines.firstIndex(of: "// README quick start: end"))
        return Array(lines[(begin + 1)..<end])
    }

    @Test func theQuickStartIsTheCodeTheTestsCompile() throws {
        let readme = try readmeQuickStart()
        let compiled = try compiledQuickStart()
        #expect(!readme.isEmpty)
        for (number, (documented, built)) in zip(readme, compiled).enumerated() where documented != built {
            Issue.record("line \(number + 1) differs:\n  README: \(documented)\n  tests:  \(built)")
        }
        #expect(
            readme.count == compiled.count,
            "the README block has \(readme.count) lines, the compiled one \(compiled.count)")
    }

    @Test(.urlNotOverridden) func theQuickStartRunsInMemory() throws {
        #expect(try planTrip(named: "Lisbon", store: "memory:") == ["Lisbon"])
    }

    @Test(.urlNotOverridden) func theQuickStartKeepsTripsInAFileAndUpdatesATripOfTheSameName() throws {
        let directory = try TemporaryDirectory()
        let store = "json:" + directory.path("trips.json")
        #expect(try planTrip(named: "Lisbon", store: store) == ["Lisbon"])
        #expect(try planTrip(named: "Porto", store: store) == ["Lisbon", "Porto"])
        #expect(try planTrip(named: "Lisbon", store: store) == ["Lisbon", "Porto"])
        let context = ModelContext(try ModelContainer(for: Trip.self, url: store))
        let lisbon = try context.fetch(FetchDescriptor<Trip>(predicate: #Predicate { $0.name == "Lisbon" }))
        #expect(lisbon.count == 1 && lisbon.first?.items.count == 2, "the second Lisbon was an upsert")
    }
}
