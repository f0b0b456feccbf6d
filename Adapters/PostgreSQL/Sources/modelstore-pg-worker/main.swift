// A worker process for the multi-process tests and the load test: opens the PostgreSQL store in
// a namespace and increments counters by read-modify-write saves, then prints what it did.
//
//   modelstore-pg-worker NAMESPACE INCREMENTS COUNTERS [SECONDS] [CONTEXTS]
//   modelstore-pg-worker setup NAMESPACE COUNTERS    creates counters c0… at zero, then prints them
//
// With SECONDS, it runs for that long (at most INCREMENTS increments per context) instead.
// Prints one line: `acknowledged=N conflicts=C failed=F p50us=… p99us=… perCounter=a,b,…`, where
// failed counts increments that threw (not acknowledged). The URL comes from MODELSTORE_POSTGRES_URL.
// With MODELSTORE_PG_WORKER_LATENCIES=FILE it also writes every acknowledged increment's latency
// (microseconds, one per line) to FILE, so a load test can take percentiles over all processes.
import Foundation
import ModelStore
import ModelStorePostgreSQL
import PostgreSQLTestModels

let arguments = CommandLine.arguments
if arguments.count == 4, arguments[1] == "setup", let count = Int(arguments[3]),
    let url = ProcessInfo.processInfo.environment["MODELSTORE_POSTGRES_URL"]
{
    do {
        var configuration = try PostgreSQLStoreConfiguration(url: url)
        configuration.namespace = arguments[2]
        let container = try ModelContainer(for: Counter.schema, configurations: [configuration])
        let context = ModelContext(container)
        for index in 0..<count { context.insert(Counter(name: "c\(index)")) }
        try context.save()
        exit(0)
    } catch {
        FileHandle.standardError.write(Data("modelstore-pg-worker setup: \(error)\n".utf8))
        exit(1)
    }
}
guard arguments.count >= 4, let increments = Int(arguments[2]), let counters = Int(arguments[3]),
    let url = ProcessInfo.processInfo.environment["MODELSTORE_POSTGRES_URL"]
else {
    FileHandle.standardError.write(
        Data("usage: modelstore-pg-worker NAMESPACE INCREMENTS COUNTERS [SECONDS] [CONTEXTS]\n".utf8))
    exit(2)
}
let seconds = arguments.count > 4 ? Double(arguments[4]) : nil
let contexts = arguments.count > 5 ? Int(arguments[5]) ?? 1 : 1
do {
    var configuration = try PostgreSQLStoreConfiguration(url: url)
    configuration.namespace = arguments[1]
    let container = try ModelContainer(for: Counter.schema, configurations: [configuration])
    let deadline = seconds.map { Date().addingTimeInterval($0) }
    let results = LockedValue<(acknowledged: [Int], conflicts: Int, failed: Int, latencies: [Double])>(
        (Array(repeating: 0, count: counters), 0, 0, []))
    let group = DispatchGroup()
    for worker in 0..<contexts {
        group.enter()
        Thread.detachNewThread {
            defer { group.leave() }
            var generator = SystemRandomNumberGenerator()
            for step in 0..<increments {
                if let deadline, Date() >= deadline { break }
                let index = (worker + step + Int.random(in: 0..<counters, using: &generator)) % counters
                let start = ContinuousClock.now
                do {
                    let conflicts = try increment("c\(index)", in: container)
                    let duration = ContinuousClock.now - start
                    let elapsed =
                        Double(duration.components.seconds) * 1_000_000
                        + Double(duration.components.attoseconds) / 1_000_000_000_000
                    results.withLock {
                        $0.acknowledged[index] += 1
                        $0.conflicts += conflicts
                        $0.latencies.append(elapsed)
                    }
                } catch {
                    results.withLock { $0.failed += 1 }
                    FileHandle.standardError.write(Data("increment failed: \(error)\n".utf8))
                }
            }
        }
    }
    group.wait()
    let final = results.withLock { $0 }
    let sorted = final.latencies.sorted()
    func percentile(_ p: Double) -> Int {
        sorted.isEmpty ? 0 : Int(sorted[min(sorted.count - 1, Int(Double(sorted.count) * p))])
    }
    if let path = ProcessInfo.processInfo.environment["MODELSTORE_PG_WORKER_LATENCIES"] {
        let text = final.latencies.map { String(Int($0.rounded())) }.joined(separator: "\n")
        try Data((text + "\n").utf8).write(to: URL(fileURLWithPath: path))
    }
    print(
        "acknowledged=\(final.acknowledged.reduce(0, +)) conflicts=\(final.conflicts) failed=\(final.failed) "
            + "p50us=\(percentile(0.5)) "
            + "p99us=\(percentile(0.99)) perCounter=\(final.acknowledged.map(String.init).joined(separator: ","))")
} catch {
    FileHandle.standardError.write(Data("modelstore-pg-worker: \(error)\n".utf8))
    exit(1)
}
