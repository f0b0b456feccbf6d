/// The command line of `modelstore-bench`.
public struct Options: Sendable, Hashable {
    /// What the process does.
    public enum Mode: Sendable, Hashable {
        /// Runs every selected benchmark, each in a child process, and prints the report.
        case run
        /// Runs one benchmark in this process and prints its measurement (used by `run`).
        case child(workload: String, system: String, n: Int)
        /// Prints the workloads and systems.
        case list
        /// Prints the usage.
        case help
    }

    /// What the process does.
    public var mode: Mode = .run
    /// The store sizes to run.
    public var sizes: [Int] = [10_000, 100_000, 1_000_000]
    /// Whether this is the CI smoke run (tiny sizes, few repetitions).
    public var isSmoke = false
    /// Prints one JSON object per line instead of the markdown report.
    public var json = false
    /// The workloads to run; empty runs all.
    public var workloads: [String] = []
    /// The systems to run; empty runs all.
    public var systems: [String] = []
    /// Seconds of timed repetitions to aim for per benchmark, after the minimum count.
    public var timeBudget: Double = 2
    /// The fewest timed repetitions per benchmark.
    public var minimumRepetitions = 5
    /// The most timed repetitions per benchmark.
    public var maximumRepetitions = 200
    /// Seconds of timed repetitions after which a benchmark stops even below the minimum count.
    public var timeCap: Double = 60
    /// Seconds of wall clock, untimed set-up included, after which a benchmark that has run its
    /// minimum count stops (``RepetitionPolicy/wallBudget``).
    public var wallBudget: Double = 60
    /// Seconds after which a child process is stopped and its benchmark reported as failed.
    public var childTimeout: Double = 1_200
    /// Where the child processes write their store files; a fresh temporary directory when `nil`.
    public var scratchDirectory: String?
    /// A file to which every result is appended in full, as it arrives, for `--from`.
    public var saveFile: String?
    /// Files of saved results to report on instead of running (later results replace earlier ones).
    public var fromFiles: [String] = []
    /// The results page whose generated part is written from the run (with its charts and saved
    /// results in the `results` folder beside it).
    public var pageFile: String?
    /// How many times every selected benchmark runs, in as many passes over the whole list, each run in a
    /// child process of its own; the report gives the median of the runs' medians
    /// (``BenchmarkResult/combiningRounds(_:)``).
    public var rounds = 1

    /// The usage text.
    public static let usage = """
        usage: modelstore-bench [--quick | --smoke | --sizes N,N,...] [--json]
                 [--workloads a,b] [--systems x,y] [--budget SECONDS]
                 [--min-reps K] [--max-reps K] [--cap SECONDS] [--wall SECONDS]
                 [--timeout SECONDS] [--scratch DIR] [--save FILE]
                 [--rounds K] [--from FILE,FILE] [--page FILE]
               modelstore-bench --list

          (no size flag)  N = 10k, 100k and 1M
          --quick         N = 10k and 100k
          --smoke         a tiny N and one repetition, for CI
          --json          one JSON object per line instead of the markdown report
          --budget        seconds of timed repetitions to aim for per benchmark
                          (default 2)
          --min-reps      fewest repetitions (default 5), unless they pass --cap
                          seconds (default 60)
          --max-reps      most repetitions (default 200)
          --wall          after the fewest, stop once a benchmark has run this many
                          seconds, set-up included (default 60)
          --timeout       seconds before a benchmark's child process is stopped
                          (default 1200)
          --rounds K      run the whole list K times, every benchmark in a process
                          of its own each time, and report the median of its K
                          medians (default 1)
          --save FILE     also append every full result to FILE as it arrives
          --from FILES    report on results saved with --save instead of running
                          (later files win)
          --page FILE     write the run into FILE's generated part, its charts (SVG)
                          and results into the folder results/ beside FILE
        Build in release mode:
          swift run -c release --package-path Benchmarks modelstore-bench --quick
        """

    /// Options with the defaults: every workload and system at 10k, 100k and 1M.
    public init() {}

    /// Parses arguments (without the program name). Throws ``OptionsError`` on anything it does not know.
    public init(arguments: [String]) throws {
        var remaining = arguments[...]
        func value(for flag: String) throws -> String {
            guard let next = remaining.popFirst(), !next.hasPrefix("--") else {
                throw OptionsError("'\(flag)' needs a value; see --help")
            }
            return next
        }
        func number<N: LosslessStringConvertible>(_ text: String, for flag: String) throws -> N {
            guard let value = N(text.replacingOccurrences(of: "_", with: "")) else {
                throw OptionsError("'\(flag)' expects a number, not '\(text)'")
            }
            return value
        }
        while let argument = remaining.popFirst() {
            switch argument {
            case "--quick": sizes = [10_000, 100_000]
            case "--smoke":
                isSmoke = true
                sizes = [2_000]
                minimumRepetitions = 1
                maximumRepetitions = 3
                timeBudget = 0.05
                childTimeout = 300
            case "--sizes":
                sizes = try value(for: argument).split(separator: ",").map { try number(String($0), for: argument) }
                if sizes.isEmpty || sizes.contains(where: { $0 < 1 }) {
                    throw OptionsError("'--sizes' expects positive counts such as '10000,100000'")
                }
            case "--json": json = true
            case "--workloads":
                workloads = try Self.names(value(for: argument), known: Catalog.workloads, kind: "workload")
            case "--systems":
                let known =
                    Catalog.systems.map(\.name)
                    + Catalog.systems.filter(\.isModelStore).map { $0.name + Catalog.batchInsertSuffix }
                systems = try Self.names(value(for: argument), known: known, kind: "system")
            case "--budget": timeBudget = try number(value(for: argument), for: argument)
            case "--min-reps": minimumRepetitions = try number(value(for: argument), for: argument)
            case "--max-reps": maximumRepetitions = try number(value(for: argument), for: argument)
            case "--cap": timeCap = try number(value(for: argument), for: argument)
            case "--wall": wallBudget = try number(value(for: argument), for: argument)
            case "--timeout": childTimeout = try number(value(for: argument), for: argument)
            case "--scratch": scratchDirectory = try value(for: argument)
            case "--rounds":
                rounds = try number(value(for: argument), for: argument)
                if rounds < 1 { throw OptionsError("'--rounds' expects a count of at least 1, such as '3'") }
            case "--save": saveFile = try value(for: argument)
            case "--from": fromFiles = try value(for: argument).split(separator: ",").map(String.init)
            case "--page": pageFile = try value(for: argument)
            case "--list": mode = .list
            case "--help", "-h": mode = .help
            case "--child":
                let workload = try value(for: argument)
                let system = try value(for: argument)
                let n: Int = try number(value(for: argument), for: argument)
                mode = .child(workload: workload, system: system, n: n)
            default:
                throw OptionsError("unknown argument '\(argument)'; see --help")
            }
        }
    }

    /// The repetition policy the options describe.
    public var repetitionPolicy: RepetitionPolicy {
        var policy = RepetitionPolicy(
            minimum: minimumRepetitions, maximum: maximumRepetitions, timeBudget: timeBudget, timeCap: timeCap)
        policy.wallBudget = wallBudget
        return policy
    }

    /// The arguments that make a child process run one benchmark with these options.
    public func childArguments(workload: String, system: String, n: Int, scratch: String) -> [String] {
        var arguments = ["--child", workload, system, String(n), "--scratch", scratch]
        arguments += ["--budget", String(timeBudget), "--min-reps", String(minimumRepetitions)]
        arguments += ["--max-reps", String(maximumRepetitions), "--cap", String(timeCap)]
        arguments += ["--wall", String(wallBudget)]
        return arguments
    }

    private static func names(_ list: String, known: [String], kind: String) throws -> [String] {
        let names = list.split(separator: ",").map(String.init)
        if let unknown = names.first(where: { !known.contains($0) }) {
            throw OptionsError("unknown \(kind) '\(unknown)'; use one of: \(known.joined(separator: ", "))")
        }
        return names
    }
}

/// A command-line mistake, described so the user can fix it.
public struct OptionsError: Error, CustomStringConvertible {
    /// What is wrong and how to fix it.
    public let description: String

    init(_ description: String) { self.description = description }
}
