import Foundation
import Testing

/// Runs an executable the package builds (such as `trips`) and captures what it prints.
struct SampleProcess {
    /// What a run printed and how it ended.
    struct Output: CustomStringConvertible {
        var status: Int32
        var standardOutput: String
        var standardError: String

        var description: String {
            "exit status \(status)\n--- stdout\n\(standardOutput)--- stderr\n\(standardError)"
        }
    }

    let executable: URL

    /// The executable at `executable`, such as `/bin/bash`.
    init(executable: URL) {
        self.executable = executable
    }

    /// The executable named `name` in the build directory the tests run from.
    ///
    /// The test bundle lives in the build products directory (`.build/debug`), next to every
    /// executable product, so the executable is looked for beside it and in its parents.
    init(named name: String) throws {
        let start = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        var directory = start.deletingLastPathComponent()
        for _ in 0..<4 {
            let candidate = directory.appendingPathComponent(name)
            if FileManager.default.isExecutableFile(atPath: candidate.path) {
                executable = candidate
                return
            }
            directory = directory.deletingLastPathComponent()
        }
        throw SampleNotBuilt(name: name, searchedFrom: start.path)
    }

    /// Runs the executable with arguments in a working directory; `MODELSTORE_URL` is removed
    /// from the environment unless `environment` sets it.
    func run(_ arguments: [String], in directory: URL, environment: [String: String] = [:]) throws -> Output {
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        process.currentDirectoryURL = directory
        var variables = ProcessInfo.processInfo.environment
        variables["MODELSTORE_URL"] = nil
        variables.merge(environment) { $1 }
        process.environment = variables
        let output = Pipe()
        let error = Pipe()
        process.standardOutput = output
        process.standardError = error
        try process.run()
        let outputData = output.fileHandleForReading.readDataToEndOfFile()
        let errorData = error.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return Output(
            status: process.terminationStatus, standardOutput: String(decoding: outputData, as: UTF8.self),
            standardError: String(decoding: errorData, as: UTF8.self))
    }
}

/// The sample's executable is not in the build directory.
struct SampleNotBuilt: Error, CustomStringConvertible {
    var name: String
    var searchedFrom: String

    var description: String {
        "the executable '\(name)' was not found beside '\(searchedFrom)'. Build it with 'swift build --build-tests' "
            + "(which builds every product) before running the tests"
    }
}
