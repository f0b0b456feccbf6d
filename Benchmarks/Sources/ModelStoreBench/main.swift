import BenchHarness
import Foundation

// modelstore-bench: ModelStore against its peers and the physical limit, in one run.
// See Benchmarks/README.md for the workloads, the systems and the latest numbers.

let options: Options
do {
    options = try Options(arguments: Array(CommandLine.arguments.dropFirst()))
} catch {
    FileHandle.standardError.write(Data("modelstore-bench: \(error)\n\(Options.usage)\n".utf8))
    exit(64)
}

#if DEBUG
    // A debug build's timings are not ModelStore's: it runs only the smoke size (which checks every
    // benchmark's result, as CI does) and the children a run starts.
    if case .run = options.mode, !options.isSmoke {
        FileHandle.standardError.write(
            Data(
                """
                modelstore-bench: refusing to report numbers from a debug build (it runs --smoke only).
                Build in release mode: swift run -c release --package-path Benchmarks modelstore-bench --quick

                """.utf8))
        exit(2)
    }
#endif

switch options.mode {
case .help:
    print(Options.usage)
case .list:
    print("workloads: " + Catalog.workloads.joined(separator: ", "))
    for system in Catalog.systems { print("\(system.name): \(system.summary) [\(system.durability.rawValue)]") }
case .child(let workload, let system, let n):
    print(try ChildProcess.resultLine(Child.run(workload: workload, system: system, n: n, options: options)))
case .run:
    exit(Parent.run(options))
}
