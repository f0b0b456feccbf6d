import BenchHarness

/// The command line of `modelstore-pg-bench`.
struct PGOptions: Sendable {
    enum Mode: Sendable {
        case run
        case child(workload: String, system: String, n: Int)
        case list
        case help
    }

    var mode: Mode = .run
    var sizes = [10_000, 100_000]
    var isSmoke = false
    var json = false
    var workloads: [String] = []
    var systems: [String] = []
    var timeBudget: Double = 2
    var minimumRepetitions = 5
    var maximumRepetitions = 200
    var timeCap: Double = 60
    var wallBudget: Double = 60
    var childTimeout: Double = 1_200
    var saveFile: String?
    var fromFiles: [String] = []
    var rounds = 1

    static let usage = """
        usage: modelstore-pg-bench [--smoke | --sizes N,N,...] [--json]
                 [--workloads a,b] [--systems x,y] [--budget SECONDS]
                 [--wall SECONDS] [--min-reps K] [--max-reps K] [--cap SECONDS]
                 [--timeout SECONDS] [--rounds K] [--save FILE] [--from FILE,FILE]
               modelstore-pg-bench --list

          (no size flag)  N = 10k and 100k
          --smoke         a tiny N and at most three repetitions, for CI
          --budget        seconds of timed repetitions to aim for per benchmark
                          (default 2)
          --wall          seconds of wall clock per benchmark, set-up included,
                          after the minimum (default 60)
          --min-reps      fewest repetitions (default 5), unless they pass --cap
                          seconds (default 60)
          --rounds K      run the whole list K times, every benchmark in a process
                          of its own each time, and report each benchmark's
                          median of its K medians (default 1)
          --save FILE     also append every full result to FILE as it arrives
          --from FILES    report on results saved with --save instead of running
                          (later files win)
        The server comes from the environment that scripts/postgres.sh exports
        (MODELSTORE_POSTGRES_URL, PG*):
            scripts/postgres.sh run -- swift run -c release \\
                --package-path Benchmarks/PostgreSQLBenchmarks modelstore-pg-bench
        """

    init(arguments: [String]) throws {
        var remaining = arguments[...]
        func value(for flag: String) throws -> String {
            guard let next = remaining.popFirst(), !next.hasPrefix("--") else {
                throw PGOptionsError("'\(flag)' needs a value; see --help")
            }
            return next
        }
        func number<N: LosslessStringConvertible>(_ text: String, for flag: String) throws -> N {
            guard let value = N(text.replacingOccurrences(of: "_", with: "")) else {
                throw PGOptionsError("'\(flag)' expects a number, not '\(text)'")
            }
            return value
        }
        func names(_ list: String, known: [String], kind: String) throws -> [String] {
            let names = list.split(separator: ",").map(String.init)
            if let unknown = names.first(where: { !known.contains($0) }) {
                throw PGOptionsError("unknown \(kind) '\(unknown)'; use one of: \(known.joined(separator: ", "))")
            }
            return names
        }
        while let argument = remaining.popFirst() {
            switch argument {
            case "--smoke":
                isSmoke = true
                sizes = [1_000]
                minimumRepetitions = 1
                maximumRepetitions = 3
                timeBudget = 0.05
                childTimeout = 300
            case "--sizes":
                sizes = try value(for: argument).split(separator: ",").map { try number(String($0), for: argument) }
                if sizes.isEmpty || sizes.contains(where: { $0 < 1 }) {
                    throw PGOptionsError("'--sizes' expects positive counts such as '10000,100000'")
                }
            case "--json": json = true
            case "--workloads":
                workloads = try names(value(for: argument), known: Workload.allCases.map(\.rawValue), kind: "workload")
            case "--systems":
                systems = try names(value(for: argument), known: Systems.all.map(\.name), kind: "system")
            case "--budget": timeBudget = try number(value(for: argument), for: argument)
            case "--wall": wallBudget = try number(value(for: argument), for: argument)
            case "--min-reps": minimumRepetitions = try number(value(for: argument), for: argument)
            case "--max-reps": maximumRepetitions = try number(value(for: argument), for: argument)
            case "--cap": timeCap = try number(value(for: argument), for: argument)
            case "--timeout": childTimeout = try number(value(for: argument), for: argument)
            case "--rounds":
                rounds = try number(value(for: argument), for: argument)
                if rounds < 1 { throw PGOptionsError("'--rounds' expects a count of at least 1, such as '3'") }
            case "--save": saveFile = try value(for: argument)
            case "--from": fromFiles = try value(for: argument).split(separator: ",").map(String.init)
            case "--list": mode = .list
            case "--help", "-h": mode = .help
            case "--child":
                let workload = try value(for: argument)
                let system = try value(for: argument)
                let n: Int = try number(value(for: argument), for: argument)
                mode = .child(workload: workload, system: system, n: n)
            default:
                throw PGOptionsError("unknown argument '\(argument)'; see --help")
            }
        }
    }

    var repetitionPolicy: RepetitionPolicy {
        var policy = RepetitionPolicy(
            minimum: minimumRepetitions, maximum: maximumRepetitions, timeBudget: timeBudget, timeCap: timeCap)
        policy.wallBudget = wallBudget
        return policy
    }

    func childArguments(workload: String, system: String, n: Int) -> [String] {
        var arguments = ["--child", workload, system, String(n)]
        arguments += ["--budget", String(timeBudget), "--wall", String(wallBudget)]
        arguments += ["--min-reps", String(minimumRepetitions), "--max-reps", String(maximumRepetitions)]
        arguments += ["--cap", String(timeCap)]
        return arguments
    }
}

/// A command-line mistake, described so the user can fix it.
struct PGOptionsError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
