import Foundation

/// Runs an executable the package builds (`modelstore`, `trips`, the crash and fuzz programs) and
/// captures what it prints.
public struct SampleProcess: Sendable {
    /// What a run printed and how it ended.
    public struct Output: CustomStringConvertible, Sendable {
        /// The exit status.
        public var status: Int32
        /// What it printed on standard output.
        public var standardOutput: String
        /// What it printed on standard error.
        public var standardError: String

        /// The status and both streams, for a failed expectation.
        public var description: String {
            "exit status \(status)\n--- stdout\n\(standardOutput)--- stderr\n\(standardError)"
        }
    }

    /// The executable it runs.
    public let executable: URL

    /// The executable at `executable`, such as `/bin/bash`.
    public init(executable: URL) {
        self.executable = executable
    }

    /// The executable named `name` in the build directory the tests run from.
    public init(named name: String) throws {
        executable = try Self.builtExecutable(named: name)
    }

    /// Where the package's executable `name` was built.
    ///
    /// The test bundle lives in the build products directory (`.build/debug`), next to every
    /// executable product, so the executable is looked for beside it and in its parents.
    public static func builtExecutable(named name: String) throws -> URL {
        let start = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        var directory = start.deletingLastPathComponent()
        for _ in 0..<4 {
            let candidate = directory.appendingPathComponent(name)
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
            directory = directory.deletingLastPathComponent()
        }
        throw SampleNotBuilt(name: name, searchedFrom: start.path)
    }

    /// Runs the executable with arguments in a working directory; `MODELSTORE_URL` is removed
    /// from the environment unless `environment` sets it.
    public func run(_ arguments: [String], in directory: URL, environment: [String: String] = [:]) throws -> Output {
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

/// The executable is not in the build directory.
public struct SampleNotBuilt: Error, CustomStringConvertible {
    /// The executable's name.
    public var name: String
    /// The test bundle's path, where the search started.
    public var searchedFrom: String

    /// What is missing and how to build it.
    public var description: String {
        "the executable '\(name)' was not found beside '\(searchedFrom)'. Build it with 'swift build --build-tests' "
            + "(which builds every product) before running the tests"
    }
}
