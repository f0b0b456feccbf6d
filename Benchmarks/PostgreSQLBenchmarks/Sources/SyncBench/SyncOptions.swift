/// The command line of `modelstore-sync-bench`: every flag checked, so a misspelt one stops the run
/// with a message instead of starting a full run that ignores it.
struct SyncOptions {
    /// A child runs one benchmark in its own process and prints its result line.
    struct Child {
        var workload: String
        var system: String
        var n: Int
    }

    var help = false
    var child: Child?
    var sizes = [10_000, 100_000]
    var systems = SyncSystem.allCases.map(\.rawValue)
    var workloads = SyncWorkload.allCases.map(\.rawValue)
    var changes = 1_000
    var minimumRepetitions: Int?
    var maximumRepetitions: Int?
    var isSmoke = false
    var json = false

    static let usage = """
        usage: modelstore-sync-bench [--smoke | --sizes N,N,...] [--json]
                 [--workloads a,b] [--systems x,y] [--changes K]
                 [--min-reps K] [--max-reps K]

          (no size flag)  N = 10k and 100k
          --smoke         N = 2,000 and at most two repetitions, for CI
          --workloads     initial-push, initial-pull, round-push-1k,
                          round-pull-1k, round-quiet (default: all)
          --systems       sqlite-to-sqlite, sqlite-to-postgres (default: both)
          --changes       models a round changes (default 1,000, at most N)
          --min-reps      fewest repetitions (default 3)
          --max-reps      most repetitions (default 20), taken while the timed
                          total stays under 2 s
          --json          also print each result as a JSON line
        Each benchmark runs in a child process of its own. sqlite-to-postgres
        needs the server that scripts/postgres.sh exports:
            scripts/postgres.sh run -- swift run -c release \\
                --package-path Benchmarks/PostgreSQLBenchmarks modelstore-sync-bench
        """

    init(arguments: [String]) throws(SyncOptionsError) {
        var remaining = arguments[...]
        func value(for flag: String) throws(SyncOptionsError) -> String {
            guard let next = remaining.popFirst(), !next.hasPrefix("--") else {
                throw SyncOptionsError("'\(flag)' needs a value; see --help")
            }
            return next
        }
        func count(_ text: String, for flag: String) throws(SyncOptionsError) -> Int {
            guard let value = Int(text.replacingOccurrences(of: "_", with: "")), value > 0 else {
                throw SyncOptionsError("'\(flag)' expects a whole number above 0, not '\(text)'")
            }
            return value
        }
        func names(_ list: String, known: [String], kind: String) throws(SyncOptionsError) -> [String] {
            let names = list.split(separator: ",").map(String.init)
            if names.isEmpty { throw SyncOptionsError("'\(list)' names no \(kind); see --help") }
            if let unknown = names.first(where: { !known.contains($0) }) {
                throw SyncOptionsError("unknown \(kind) '\(unknown)'; use one of: \(known.joined(separator: ", "))")
            }
            return names
        }
        var sizesGiven = false
        while let argument = remaining.popFirst() {
            switch argument {
            case "--help", "-h":
                help = true
            case "--smoke":
                isSmoke = true
            case "--json":
                json = true
            case "--sizes":
                var parsed: [Int] = []
                for part in try value(for: argument).split(separator: ",") {
                    parsed.append(try count(String(part), for: argument))
                }
                if parsed.isEmpty { throw SyncOptionsError("'--sizes' names no size; see --help") }
                sizes = parsed
                sizesGiven = true
            case "--systems":
                systems = try names(
                    value(for: argument), known: SyncSystem.allCases.map(\.rawValue), kind: "system")
            case "--workloads":
                workloads = try names(
                    value(for: argument), known: SyncWorkload.allCases.map(\.rawValue), kind: "workload")
            case "--changes":
                changes = try count(value(for: argument), for: argument)
            case "--min-reps":
                minimumRepetitions = try count(value(for: argument), for: argument)
            case "--max-reps":
                maximumRepetitions = try count(value(for: argument), for: argument)
            case "--child":
                let workload = try value(for: argument)
                let system = try value(for: argument)
                let n = try count(value(for: argument), for: argument)
                child = Child(workload: workload, system: system, n: n)
            default:
                throw SyncOptionsError("unknown argument '\(argument)'; see --help")
            }
        }
        if isSmoke && sizesGiven {
            throw SyncOptionsError("'--smoke' sets the size; leave out '--sizes' or '--smoke'")
        }
        if isSmoke { sizes = [2_000] }
        if let minimum = minimumRepetitions, let maximum = maximumRepetitions, minimum > maximum {
            throw SyncOptionsError("'--min-reps' (\(minimum)) is above '--max-reps' (\(maximum))")
        }
    }
}

/// A command line `modelstore-sync-bench` cannot run, and why.
struct SyncOptionsError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
