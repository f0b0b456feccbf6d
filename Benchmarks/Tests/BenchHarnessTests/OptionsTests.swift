import Testing

@testable import BenchHarness

struct OptionsTests {
    @Test func theWallBudgetReachesTheChildsRepetitionPolicy() throws {
        let parent = try Options(arguments: ["--min-reps", "3", "--max-reps", "200", "--wall", "10"])
        #expect(parent.repetitionPolicy.wallBudget == 10)
        let child = try Options(
            arguments: parent.childArguments(workload: "fetch-unique", system: "sqlite", n: 10_000, scratch: "/tmp/x"))
        #expect(child.mode == .child(workload: "fetch-unique", system: "sqlite", n: 10_000))
        #expect(child.repetitionPolicy == parent.repetitionPolicy)
        #expect(child.repetitionPolicy.minimum == 3 && child.repetitionPolicy.maximum == 200)
    }

    @Test func theWallBudgetDefaultsToAMinuteAndRejectsWhatIsNotANumber() throws {
        #expect(try Options(arguments: []).repetitionPolicy.wallBudget == 60)
        #expect(throws: OptionsError.self) { try Options(arguments: ["--wall", "soon"]) }
    }

    @Test func roundsDefaultToOneAndMustBeAPositiveCount() throws {
        #expect(try Options(arguments: []).rounds == 1)
        #expect(try Options(arguments: ["--rounds", "3"]).rounds == 3)
        #expect(throws: OptionsError.self) { try Options(arguments: ["--rounds", "0"]) }
        #expect(throws: OptionsError.self) { try Options(arguments: ["--rounds", "some"]) }
        #expect(Options.usage.contains("--rounds K"))
    }

    @Test func theUsageFitsAnEightyColumnTerminal() {
        let wide = Options.usage.split(separator: "\n").filter { $0.count > 80 }
        #expect(wide.isEmpty, "lines over 80 columns: \(wide)")
    }
}
