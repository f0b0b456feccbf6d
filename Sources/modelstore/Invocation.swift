/// A command line, parsed for one command: its positional arguments and the flags given.
///
/// The grammar is small on purpose: flags start with `--` (`-h` is `--help`), take no value, and
/// may come anywhere; `--` ends the flags, so a path that starts with a dash can follow it.
struct Invocation {
    /// The positional arguments, in order.
    let arguments: [String]
    /// The flags given, with their dashes.
    let flags: Set<String>

    /// Whether the flag was given.
    func has(_ flag: String) -> Bool { flags.contains(flag) }

    /// The flags every command takes.
    static let commonFlags = ["--json", "--help"]

    /// Splits `words` into arguments and flags, without checking them against a command.
    static func split(_ words: [String]) -> (arguments: [String], flags: [String]) {
        var arguments: [String] = []
        var flags: [String] = []
        var flagsEnded = false
        for word in words {
            if flagsEnded {
                arguments.append(word)
            } else if word == "--" {
                flagsEnded = true
            } else if word == "-h" {
                flags.append("--help")
            } else if word.hasPrefix("-") && word.count > 1 {
                flags.append(word)
            } else {
                arguments.append(word)
            }
        }
        return (arguments, flags)
    }

    /// Parses `words` for `command`: every flag must be one it takes, and the positional
    /// arguments must match its placeholders in number. `--help` skips the count check.
    init<C: Command>(_ words: [String], for command: C.Type) throws(ToolError) {
        let (arguments, flags) = Self.split(words)
        let accepted = Self.commonFlags + command.options.map(\.name)
        for flag in flags where !accepted.contains(flag) {
            throw .usage(
                "'\(command.name)' has no option '\(flag)'",
                remedy: "It takes " + accepted.map { "'\($0)'" }.joined(separator: ", ")
                    + ". A store URL or path that starts with '-' goes after '--'")
        }
        self.arguments = arguments
        self.flags = Set(flags)
        guard !self.flags.contains("--help"), arguments.count != command.arguments.count else { return }
        let expected = command.arguments.joined(separator: " and ")
        let given = arguments.isEmpty
            ? "no argument" : "\(arguments.count): " + arguments.map { "'\($0)'" }.joined(separator: ", ")
        throw .usage(
            "'\(command.name)' takes \(expected), but was given \(given)",
            remedy: "Write 'modelstore \(command.usage)'; see 'modelstore help \(command.name)'")
    }
}
