import Foundation

// `inmemory` against `inmemory-macro`: the main benchmarks' insert and fetch-all of simple users on the
// in-memory store, with the user written by hand and with `@Model`, in one process, repetitions
// alternating between the two so that the machine's load falls on both alike.
//
//     swift run -c release --package-path Macros modelstore-macro-bench [--count N] [--repetitions R]

/// The command line's options.
struct Options {
    var count = 100_000
    var repetitions = 11

    static let usage = "usage: modelstore-macro-bench [--count N] [--repetitions R]"

    init(_ arguments: [String]) throws {
        var remaining = arguments[...]
        while let option = remaining.popFirst() {
            guard let text = remaining.popFirst(), let value = Int(text), value > 0 else {
                throw WrongResult(description: "'\(option)' needs a positive whole number after it\n\(Self.usage)")
            }
            switch option {
            case "--count": count = value
            case "--repetitions": repetitions = value
            default: throw WrongResult(description: "unknown option '\(option)'\n\(Self.usage)")
            }
        }
    }
}

/// The median of samples: the mean of the two middle ones when there is an even number.
func median(_ samples: [Double]) -> Double {
    let sorted = samples.sorted()
    let middle = sorted.count / 2
    return sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
}

/// Runs `handWritten` and `macro` alternately, one warm-up each and then `repetitions` timed
/// runs each; returns each one's median in seconds.
func compare(
    repetitions: Int, handWritten: () throws -> Double, macro: () throws -> Double
) rethrows -> (handWritten: Double, macro: Double) {
    _ = try handWritten()
    _ = try macro()
    var samples: (handWritten: [Double], macro: [Double]) = ([], [])
    for repetition in 0..<repetitions {
        // Each goes first in every other repetition.
        if repetition.isMultiple(of: 2) {
            samples.handWritten.append(try handWritten())
            samples.macro.append(try macro())
        } else {
            samples.macro.append(try macro())
            samples.handWritten.append(try handWritten())
        }
    }
    return (median(samples.handWritten), median(samples.macro))
}

do {
    let options = try Options(Array(CommandLine.arguments.dropFirst()))
    let rows = UserRow.make(count: options.count)
    let handWritten = Workloads<HandWrittenUser>(rows: rows)
    let macro = Workloads<MacroUser>(rows: rows)

    let insert = try compare(
        repetitions: options.repetitions, handWritten: handWritten.insert, macro: macro.insert)
    let (handWrittenStore, macroStore) = (try handWritten.filledContainer(), try macro.filledContainer())
    let fetchAll = try compare(
        repetitions: options.repetitions, handWritten: { try handWritten.fetchAll(from: handWrittenStore) },
        macro: { try macro.fetchAll(from: macroStore) })

    print("\(options.count) users, median of \(options.repetitions) repetitions each (seconds)")
    print("workload   inmemory   inmemory-macro   macro / hand-written")
    for (name, result) in [("insert", insert), ("fetch-all", fetchAll)] {
        let cells = [
            name.padding(toLength: 11, withPad: " ", startingAt: 0),
            String(format: "%-11.4f", result.handWritten), String(format: "%-17.4f", result.macro),
            String(format: "%.3f", result.macro / result.handWritten),
        ]
        print(cells.joined())
    }
} catch {
    FileHandle.standardError.write(Data("modelstore-macro-bench: \(error)\n".utf8))
    exit(1)
}
