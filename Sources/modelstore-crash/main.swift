import Foundation
import ModelStore
import ModelStoreAdapters

// `modelstore-crash`: the two halves of scripts/crash-test.sh.
//
//   modelstore-crash write URL ACKFILE [COMPACT-EVERY]   save transactions until killed
//   modelstore-crash migrate URL                         open with version 2.0.0 and its plan (migrating)
//   modelstore-crash version URL                         print the schema version the store records
//   modelstore-crash check URL ACKFILE                   reopen and compare with the acknowledgements
//
// `check` prints one line, `acknowledged A stored S lost L partial P`, and exits 0 when the store
// lost nothing acknowledged and holds no partial transaction, 1 when it did, 3 when it did not open.

StoreRegistry.shared.registerBuiltInSchemes()
let arguments = Array(CommandLine.arguments.dropFirst())
if arguments.count == 2, arguments[0] == "migrate" || arguments[0] == "version" {
    do {
        if arguments[0] == "version" {
            print(try storedCrashSchemaVersion(url: arguments[1]))
        } else {
            try migrateCrashStore(url: arguments[1])
        }
        exit(0)
    } catch {
        FileHandle.standardError.write(Data("modelstore-crash \(arguments[0]): \(error)\n".utf8))
        exit(1)
    }
}
guard arguments.count >= 3 else {
    FileHandle.standardError.write(
        Data("usage: modelstore-crash write|check URL ACKFILE [COMPACT-EVERY], or migrate URL\n".utf8))
    exit(2)
}
switch arguments[0] {
case "write":
    do {
        try CrashWriter(
            url: arguments[1], acknowledgements: arguments[2],
            compactionInterval: arguments.count > 3 ? Int(arguments[3]) ?? 0 : 0
        ).run()
    } catch {
        FileHandle.standardError.write(Data("modelstore-crash write: \(error)\n".utf8))
        exit(1)
    }
case "check":
    let outcome: CrashChecker.Outcome
    do {
        outcome = try CrashChecker(url: arguments[1], acknowledgements: arguments[2]).run()
    } catch {
        print("open failed: \(error)")
        exit(3)
    }
    print(
        "acknowledged \(outcome.acknowledged) stored \(outcome.stored) lost \(outcome.lost) "
            + "partial \(outcome.problems.isEmpty ? 0 : 1)")
    for problem in outcome.problems { print("  \(problem)") }
    exit(outcome.lost == 0 && outcome.problems.isEmpty ? 0 : 1)
default:
    FileHandle.standardError.write(Data("modelstore-crash: unknown command '\(arguments[0])'\n".utf8))
    exit(2)
}
