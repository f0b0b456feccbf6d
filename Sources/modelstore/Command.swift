import Foundation

/// A subcommand of `modelstore`: its command line, its help, and what it does.
///
/// Each command lives in a file of its own and returns a report, which the ``Console`` prints as
/// text or, with `--json`, as a JSON object.
protocol Command {
    /// The command's name, as typed (`inspect`).
    static var name: String { get }
    /// The placeholders of its positional arguments, in order (`["URL"]`).
    static var arguments: [String] { get }
    /// The options it takes besides `--json` and `--help`.
    static var options: [CommandOption] { get }
    /// What the command does, in one line.
    static var summary: String { get }
    /// What `modelstore help COMMAND` prints after the usage line: the details and the examples.
    static var details: String { get }

    /// Runs the command on a parsed command line; throws ``ToolError`` or `DataStoreError`.
    static func run(_ invocation: Invocation, console: Console) throws -> any CommandReport
}

extension Command {
    /// The command's usage line: `inspect URL [--json]`.
    static var usage: String {
        let options = self.options.map { "[\($0.name)]" } + ["[--json]"]
        return ([name] + arguments + options).joined(separator: " ")
    }

    /// No options besides `--json` and `--help`.
    static var options: [CommandOption] { [] }
}

/// An option a command takes, such as `--mermaid`. Options are flags: they take no value.
struct CommandOption {
    /// The option as typed, with its dashes.
    let name: String
    /// What it does, in a few words.
    let summary: String
}

/// What a command reports: printed as ``text``, or encoded as JSON with `--json`.
protocol CommandReport: Encodable {
    /// The report for people, ending without a newline.
    var text: String { get }
    /// How the tool exits after printing the report.
    var status: ExitStatus { get }
}

extension CommandReport {
    /// Success.
    var status: ExitStatus { .success }
}
