import Foundation
import ModelStore
import ModelStoreAdapters

// `modelstore-sync-crash`: the two halves of scripts/sync-crash-test.sh.
//
//   modelstore-sync-crash work WRITER LOCAL-URL SHARED-URL ACKFILE [LIMIT]
//       apply WRITER's operations to the local store, acknowledging each, with sync rounds in
//       between, until killed (or LIMIT operations are acknowledged)
//   modelstore-sync-crash check SHARED-URL WRITER=LOCAL-URL=ACKFILE ...
//       the last clean round, then the checks
//
// `check` prints `acknowledged A notes N problems P` and a line per problem, and exits 0 when there
// is none, 1 when there is one, 3 when a store did not open or a round failed.

StoreRegistry.shared.registerBuiltInSchemes()
let arguments = Array(CommandLine.arguments.dropFirst())
let usage = """
    usage: modelstore-sync-crash work WRITER LOCAL-URL SHARED-URL ACKFILE [LIMIT]
           modelstore-sync-crash check SHARED-URL WRITER=LOCAL-URL=ACKFILE ...

    """
if arguments.count >= 5, arguments[0] == "work" {
    do {
        try await SyncCrashWriter(
            writer: arguments[1], localURL: arguments[2], sharedURL: arguments[3], acknowledgements: arguments[4],
            limit: arguments.count > 5 ? Int(arguments[5]) ?? Int.max : Int.max
        ).run()
        exit(0)
    } catch {
        FileHandle.standardError.write(Data("modelstore-sync-crash work \(arguments[1]): \(error)\n".utf8))
        exit(1)
    }
} else if arguments.count >= 3, arguments[0] == "check" {
    var members: [SyncCrashChecker.Member] = []
    for argument in arguments.dropFirst(2) {
        let parts = argument.split(separator: "=", maxSplits: 2).map(String.init)
        guard parts.count == 3 else {
            FileHandle.standardError.write(
                Data("modelstore-sync-crash check: '\(argument)' is not WRITER=LOCAL-URL=ACKFILE\n".utf8))
            exit(2)
        }
        members.append(.init(writer: parts[0], localURL: parts[1], acknowledgements: parts[2]))
    }
    do {
        let outcome = try await SyncCrashChecker(sharedURL: arguments[1], members: members).run()
        print("acknowledged \(outcome.acknowledged) notes \(outcome.notes) problems \(outcome.problems.count)")
        for problem in outcome.problems { print("  \(problem)") }
        exit(outcome.problems.isEmpty ? 0 : 1)
    } catch {
        print("check failed: \(error)")
        exit(3)
    }
} else {
    FileHandle.standardError.write(Data(usage.utf8))
    exit(2)
}
