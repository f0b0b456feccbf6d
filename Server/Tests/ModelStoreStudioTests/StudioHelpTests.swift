import Foundation
import Testing

/// The studio's usage text, printed by the program built beside the test bundle, fits an 80-column
/// terminal.
struct StudioHelpTests {
    @Test func theHelpFitsEightyColumns() throws {
        let executable = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
            .appendingPathComponent("modelstore-studio")
        try #require(
            FileManager.default.isExecutableFile(atPath: executable.path),
            "'\(executable.path)' is missing: build the package's products with the tests")
        let process = Process()
        process.executableURL = executable
        process.arguments = ["--help"]
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        let lines = output.split(separator: "\n")
        #expect(lines.first?.hasPrefix("usage: modelstore-studio URL") == true)
        let wide = lines.filter { $0.count > 80 }.map { "\($0.count): \($0)" }
        #expect(wide.isEmpty, "modelstore-studio --help prints lines over 80 columns: \(wide)")
    }
}
