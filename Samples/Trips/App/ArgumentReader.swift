import Foundation

/// A mistake in the command line; `trips` prints it with a hint and exits with status 2.
struct UsageError: Error, CustomStringConvertible {
    var description: String

    init(_ description: String) { self.description = description }
}

/// Takes options and positional arguments out of a command line, one request at a time, and
/// complains about whatever is left over.
///
/// Options are written `--name value` or `--name=value`; flags are `--name`. Everything after a
/// bare `--` is positional, so a trip may be called `--weird`.
struct ArgumentReader {
    private var tokens: [String]
    private var trailing: [String]
    /// The command the arguments belong to, for messages.
    let command: String

    init(_ arguments: [String], command: String) {
        if let separator = arguments.firstIndex(of: "--") {
            tokens = Array(arguments[..<separator])
            trailing = Array(arguments[(separator + 1)...])
        } else {
            tokens = arguments
            trailing = []
        }
        self.command = command
    }

    /// Removes `--name value` or `--name=value` and returns the value; `nil` if absent.
    mutating func option(_ name: String) throws -> String? {
        for (index, token) in tokens.enumerated() {
            if token == name {
                guard index + 1 < tokens.count else {
                    throw UsageError("the option '\(name)' of '\(command)' needs a value")
                }
                let value = tokens[index + 1]
                tokens.removeSubrange(index...(index + 1))
                return value
            }
            if token.hasPrefix(name + "=") {
                tokens.remove(at: index)
                return String(token.dropFirst(name.count + 1))
            }
        }
        return nil
    }

    /// Removes every `--name value` and returns the values in order.
    mutating func options(_ name: String) throws -> [String] {
        var values: [String] = []
        while let value = try option(name) { values.append(value) }
        return values
    }

    /// Removes `--name` and returns whether it was there.
    mutating func flag(_ name: String) throws -> Bool {
        guard let index = tokens.firstIndex(where: { $0 == name || $0.hasPrefix(name + "=") }) else { return false }
        guard tokens[index] == name else { throw UsageError("the flag '\(name)' of '\(command)' takes no value") }
        tokens.remove(at: index)
        return true
    }

    /// Removes the option and converts its value, naming what was expected when it does not convert.
    mutating func option<Value>(
        _ name: String, expecting expected: String, _ convert: (String) -> Value?
    ) throws -> Value? {
        guard let text = try option(name) else { return nil }
        guard let value = convert(text) else {
            throw UsageError("the option '\(name)' of '\(command)' expects \(expected), not '\(text)'")
        }
        return value
    }

    /// The arguments not taken yet, with a `--` before the trailing ones if there were any.
    var remaining: [String] { trailing.isEmpty ? tokens : tokens + ["--"] + trailing }

    /// Returns exactly the positional arguments named, after every option was taken; throws for
    /// unknown options and for missing or extra arguments.
    mutating func finish(positionals names: [String] = []) throws -> [String] {
        if let unknown = tokens.first(where: { $0.hasPrefix("-") && $0.count > 1 }) {
            throw UsageError("'\(command)' has no option '\(unknown)'")
        }
        let positionals = tokens + trailing
        if positionals.count < names.count {
            let missing = names[positionals.count...].map { $0.uppercased() }.joined(separator: " ")
            throw UsageError("'\(command)' needs \(missing)")
        }
        if positionals.count > names.count {
            let extra = positionals[names.count...].map { "'\($0)'" }.joined(separator: " ")
            throw UsageError("'\(command)' does not take \(extra) (quote names that contain spaces)")
        }
        tokens = []
        trailing = []
        return positionals
    }
}
