import Foundation
import ModelStore
import ModelStoreAdapters
import ModelStoreSync
import ModelStoreTooling

/// The `modelstore` command: finds the subcommand, parses its command line, runs it, prints its
/// report or its error, and returns the exit status.
///
/// A program that links more adapters runs the same tool over their schemes too: it links their
/// modules (each registers its scheme, and the maintenance tools use, when the program starts) and
/// calls ``run(_:)``, as the PostgreSQL package's `modelstore` does.
public enum Tool {
    /// Every subcommand, in the order `--help` lists them.
    static var commands: [any Command.Type] {
        [
            InspectCommand.self, VerifyCommand.self, ConvertCommand.self, CompactCommand.self, RepairCommand.self,
            SchemaCommand.self, SealCommand.self, EncryptCommand.self, DecryptCommand.self, RekeyCommand.self,
            SyncCommand.self, ConflictsCommand.self,
        ]
    }

    /// Runs the tool on its arguments (without the program name) and returns the exit status.
    public static func run(_ words: [String]) -> Int32 {
        // Store URLs name the built-in schemes (the load hook registers them too; this keeps a tool
        // that links the adapters but runs before it, such as a test, from depending on that).
        StoreRegistry.shared.registerBuiltInSchemes()
        let json = Invocation.split(words).flags.contains("--json")
        let console = Console(json: json)
        guard let first = words.first(where: { !$0.hasPrefix("-") }) else {
            if words.isEmpty || words.contains("--help") || words.contains("-h") {
                print(overview)
                return words.isEmpty ? ExitStatus.usage.rawValue : ExitStatus.success.rawValue
            }
            let unknown = words.first { !["--json"].contains($0) } ?? "--json"
            console.print(
                .usage(
                    "no command given ('\(unknown)' is not one)", remedy: "Run 'modelstore --help' for the commands"),
                command: nil)
            return ExitStatus.usage.rawValue
        }
        let rest = Array(words.drop { $0 != first }.dropFirst())
        if first == "help" { return help(Invocation.split(rest).arguments, console: console) }
        guard let command = commands.first(where: { $0.name == first }) else {
            console.print(
                .usage(
                    "'\(first)' is not a modelstore command",
                    remedy: "Use one of: " + commands.map { "'\($0.name)'" }.joined(separator: ", ")
                        + "; 'modelstore --help' describes them"),
                command: nil)
            return ExitStatus.usage.rawValue
        }
        let options = Array(words.prefix { $0 != first })
        // `schema export …`: the first positional word after a command may name one of its subcommands.
        if let word = Invocation.split(rest).arguments.first,
            let subcommand = command.subcommands.first(where: { $0.name == "\(first) \(word)" }),
            let position = rest.firstIndex(of: word)
        {
            var rest = rest
            rest.remove(at: position)
            return run(subcommand, options + rest, console: console)
        }
        return run(command, options + rest, console: console)
    }

    /// Every command and subcommand, as `help` finds them by name.
    static var allCommands: [any Command.Type] {
        commands.flatMap { [$0] + $0.subcommands }
    }

    private static func run<C: Command>(_ command: C.Type, _ words: [String], console: Console) -> Int32 {
        do {
            let invocation = try Invocation(words, for: command)
            if invocation.has("--help") {
                print(help(for: command))
                return ExitStatus.success.rawValue
            }
            let report = try command.run(invocation, console: console)
            console.print(report)
            return report.status.rawValue
        } catch {
            let failure = toolError(error)
            console.print(failure, command: command.name)
            return failure.status.rawValue
        }
    }

    /// The failure to report for any error a command throws.
    static func toolError(_ error: any Error) -> ToolError {
        switch error {
        case let error as ToolError: error
        case let error as DataStoreError: ToolError(error)
        case let error as SyncError:
            ToolError(
                error.isTransient ? .failure : .unsupported, code: error.code.name,
                error.message
                    + (error.underlyingError.map { " (\($0))" } ?? ""), remedy: error.remedy)
        default: ToolError(.failure, code: "error", "\(error)")
        }
    }

    /// `modelstore help [COMMAND]`.
    private static func help(_ arguments: [String], console: Console) -> Int32 {
        guard !arguments.isEmpty else {
            print(overview)
            return ExitStatus.success.rawValue
        }
        let name = arguments.joined(separator: " ")
        guard let command = allCommands.first(where: { $0.name == name }) else {
            console.print(
                .usage(
                    "there is no command '\(name)' to describe",
                    remedy: "Use one of: " + commands.map { "'\($0.name)'" }.joined(separator: ", ")),
                command: "help")
            return ExitStatus.usage.rawValue
        }
        print(help(for: command))
        return ExitStatus.success.rawValue
    }

    /// What `modelstore help COMMAND` prints.
    static func help(for command: any Command.Type) -> String {
        var lines = HelpLayout.fill("usage: modelstore \(command.usage)", indent: "         ", first: "")
        lines += [""] + HelpLayout.reflow(command.summary.prefix(1).uppercased() + command.summary.dropFirst() + ".")
        lines += [""] + HelpLayout.reflow(command.details)
        let options =
            command.options + [
                CommandOption(name: "--json", summary: "print a JSON object instead of text (errors too, on stdout)"),
                CommandOption(name: "--help", summary: "print this help"),
            ]
        lines += ["", "Options:"] + HelpLayout.definitions(options.map { ($0.name, $0.summary) })
        lines += ["", "Exit statuses are listed by 'modelstore --help'."]
        return lines.joined(separator: "\n")
    }

    /// What `modelstore --help` prints.
    static var overview: String {
        var lines = ["usage: modelstore COMMAND ARGUMENTS [--json]", ""]
        lines += HelpLayout.reflow(
            """
            Inspects, checks, converts and maintains ModelStore stores without the app's model types: \
            each store records its schema, and the tool reads it from there. The schema commands also \
            read schema files (JSON), write model code from them and migration plans from two of them.
            """)
        lines += ["", "Commands:"]
        let synopses = allCommands.map { command in
            ([command.name] + command.arguments + command.options.map(\.usage)).joined(separator: " ")
        }
        let rows = zip(synopses, allCommands).map { ($0, $1.summary) } + [("help COMMAND", "describe a command")]
        lines += HelpLayout.definitions(rows)
        lines += ["", "Stores are named by URL:"]
        StoreRegistry.shared.registerBuiltInSchemes()
        lines += StoreRegistry.shared.schemes.flatMap {
            HelpLayout.fill($0.usage, indent: "    ", first: "  ") + HelpLayout.fill($0.summary, indent: "      ")
        }
        lines += [""]
        lines += HelpLayout.reflow(
            """
            The json:, log: and sqlite: stores create their files for their owner only (0600, folders 0700); \
            'mode=0640' in the URL chooses other bits. An encrypted json: or log: store takes its key from \
            'key-env=NAME' (64 hex digits), 'key-file=PATH' or 'passphrase-env=NAME'.
            """)
        lines += [""]
        lines += HelpLayout.reflow(
            """
            Every command takes --json, printing one JSON object on stdout (errors too, as {"error": {...}}). \
            Long operations (convert, verify, compact) draw a progress bar on stderr when it is a terminal, \
            never with --json.
            """)
        lines += ["", "Exit status:"]
        lines += HelpLayout.definitions(ExitStatus.allCases.map { (String($0.rawValue), $0.meaning) })
        return lines.joined(separator: "\n")
    }
}
