import Foundation
import ModelStoreTooling

/// A subcommand of `modelstore`: its command line, its help, and what it does.
///
/// Each command lives in a file of its own and returns a report, which the ``Console`` prints as
/// text or, with `--json`, as a JSON object.
protocol Command {
    /// The command's name, as typed (`inspect`).
    static var name: String { get }
    /// The placeholders of its positional arguments, in order (`["URL"]`).
    static var arguments: [String] { get }
    /// How many positional arguments it takes; by default exactly as many as ``arguments`` names.
    static var argumentCounts: ClosedRange<Int> { get }
    /// Its subcommands, named `"\(name) WORD"` (`schema export`); none by default.
    static var subcommands: [any Command.Type] { get }
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
        let options = self.options.map(\.usage) + ["[--json]"]
        return ([name] + arguments + options).joined(separator: " ")
    }

    /// No options besides `--json` and `--help`.
    static var options: [CommandOption] { [] }

    /// No subcommands.
    static var subcommands: [any Command.Type] { [] }

    /// Exactly as many positional arguments as ``arguments`` names.
    static var argumentCounts: ClosedRange<Int> { arguments.count...arguments.count }
}

/// An option a command takes: a flag such as `--mermaid`, or an option with a value such as
/// `--out FILE`.
struct CommandOption {
    /// The option as typed, with its dashes.
    let name: String
    /// The placeholder of its value (`FILE`), or `nil` for a flag.
    var value: String? = nil
    /// What it does, in a few words.
    let summary: String
    /// Whether the command cannot run without it.
    var isRequired = false

    /// `--out FILE`, or the flag's name.
    var synopsis: String { value.map { "\(name) \($0)" } ?? name }

    /// The synopsis as a usage line shows it: in brackets unless required.
    var usage: String { isRequired ? synopsis : "[\(synopsis)]" }
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
