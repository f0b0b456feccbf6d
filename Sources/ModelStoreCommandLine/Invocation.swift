import ModelStoreTooling

/// A command line, parsed for one command: its positional arguments, the flags given and the
/// values of its options.
///
/// The grammar is small on purpose: options start with `--` (`-h` is `--help`) and may come
/// anywhere; a flag takes no value, an option that has one takes the next word (or `--out=FILE`);
/// `--` ends the options, so a path that starts with a dash can follow it.
struct Invocation {
    /// The positional arguments, in order.
    let arguments: [String]
    /// The flags given, with their dashes.
    let flags: Set<String>
    /// The values of the options that take one, by option name with its dashes.
    let values: [String: String]

    /// Whether the flag was given.
    func has(_ flag: String) -> Bool { flags.contains(flag) }

    /// The value given to an option that takes one, if it was given.
    func value(_ option: String) -> String? { values[option] }

    /// The flags every command takes.
    static let commonFlags = ["--json", "--help"]

    /// Splits `words` into arguments and flags, without checking them against a command; the
    /// options named in `valued` take the word after them as their value.
    static func split(_ words: [String], valued: Set<String> = [])
        -> (arguments: [String], flags: [String], values: [(String, String?)])
    {
        var arguments: [String] = []
        var flags: [String] = []
        var values: [(String, String?)] = []
        var flagsEnded = false
        var pending: String?
        for word in words {
            if let option = pending {
                values.append((option, word))
                pending = nil
            } else if flagsEnded {
                arguments.append(word)
            } else if word == "--" {
                flagsEnded = true
            } else if word == "-h" {
                flags.append("--help")
            } else if word.hasPrefix("--"), let equals = word.firstIndex(of: "="),
                valued.contains(String(word[..<equals]))
            {
                values.append((String(word[..<equals]), String(word[word.index(after: equals)...])))
            } else if valued.contains(word) {
                pending = word
            } else if word.hasPrefix("-") && word.count > 1 {
                flags.append(word)
            } else {
                arguments.append(word)
            }
        }
        if let option = pending { values.append((option, nil)) }
        return (arguments, flags, values)
    }

    /// Parses `words` for `command`: every option must be one it takes, an option with a value
    /// must have one, and the positional arguments must be as many as it takes. `--help` skips
    /// the count check.
    init<C: Command>(_ words: [String], for command: C.Type) throws(ToolError) {
        let valued = Set(command.options.filter { $0.value != nil }.map(\.name))
        let (arguments, flags, values) = Self.split(words, valued: valued)
        let accepted = Self.commonFlags + command.options.map(\.name)
        for flag in flags where !accepted.contains(flag) {
            throw .usage(
                "'\(command.name)' has no option '\(flag)'",
                remedy: "It takes " + accepted.map { "'\($0)'" }.joined(separator: ", ")
                    + ". A store URL or path that starts with '-' goes after '--'")
        }
        var given: [String: String] = [:]
        for (option, value) in values {
            guard let value else {
                let placeholder = command.options.first { $0.name == option }?.value ?? "VALUE"
                throw .usage(
                    "the option '\(option)' of '\(command.name)' needs a value",
                    remedy: "Write '\(option) \(placeholder)'; see 'modelstore help \(command.name)'")
            }
            given[option] = value
        }
        self.arguments = arguments
        self.flags = Set(flags)
        self.values = given
        guard !self.flags.contains("--help"), !command.argumentCounts.contains(arguments.count) else { return }
        let expected = command.arguments.isEmpty ? "no argument" : command.arguments.joined(separator: " and ")
        let count =
            arguments.isEmpty
            ? "no argument" : "\(arguments.count): " + arguments.map { "'\($0)'" }.joined(separator: ", ")
        throw .usage(
            "'\(command.name)' takes \(expected), but was given \(count)",
            remedy: "Write 'modelstore \(command.usage)'; see 'modelstore help \(command.name)'")
    }
}
