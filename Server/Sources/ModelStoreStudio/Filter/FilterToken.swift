import Foundation

/// One token of a filter: what it is and where it starts.
struct FilterToken: Sendable, Hashable {
    /// The kinds of token.
    enum Kind: Sendable, Hashable {
        /// A name: a property, `true`, `false`, `nil`, `in`, a method.
        case identifier(String)
        /// A quoted string, unescaped.
        case string(String)
        /// A number as written.
        case number(String)
        /// A regular expression written between slashes.
        case regex(String)
        /// An operator or punctuation: `==`, `&&`, `(`, `.`, `,`, `:`.
        case symbol(String)
        /// The end of the text.
        case end
    }

    /// What the token is.
    let kind: Kind
    /// Its offset in the text, in characters.
    let position: Int

    /// The token as the user wrote it, for messages.
    var spelling: String {
        switch kind {
        case .identifier(let name): name
        case .string(let text): "\"\(text)\""
        case .number(let text): text
        case .regex(let pattern): "/\(pattern)/"
        case .symbol(let symbol): symbol
        case .end: "the end of the filter"
        }
    }
}

/// Splits a filter into tokens.
struct FilterLexer {
    private static let symbols = [
        "==", "!=", "<=", ">=", "&&", "||", "...", "..<", "<", ">", "!", "(", ")", "[", "]",
        "{", "}", ".", ",", ":",
    ]

    /// The tokens of `text`, ending with ``FilterToken/Kind/end``.
    static func tokens(_ text: String) throws -> [FilterToken] {
        let characters = Array(text)
        var tokens: [FilterToken] = []
        var index = 0
        func fail(_ message: String, at position: Int) -> FilterSyntaxError {
            FilterSyntaxError(message, at: position, in: text)
        }
        while index < characters.count {
            let character = characters[index]
            if character.isWhitespace {
                index += 1
                continue
            }
            let start = index
            if character.isLetter || character == "_" || character == "$" {
                while index < characters.count
                    && (characters[index].isLetter || characters[index].isNumber || characters[index] == "_"
                        || characters[index] == "$")
                {
                    index += 1
                }
                tokens.append(FilterToken(kind: .identifier(String(characters[start..<index])), position: start))
            } else if character.isNumber
                || (character == "-" && index + 1 < characters.count && characters[index + 1].isNumber)
            {
                index += 1
                while index < characters.count
                    && (characters[index].isNumber || characters[index] == "_"
                        || (characters[index] == "." && index + 1 < characters.count
                            && characters[index + 1].isNumber)
                        || characters[index] == "e" || characters[index] == "E"
                        || ((characters[index] == "-" || characters[index] == "+")
                            && (characters[index - 1] == "e" || characters[index - 1] == "E")))
                {
                    index += 1
                }
                tokens.append(FilterToken(kind: .number(String(characters[start..<index])), position: start))
            } else if character == "\"" {
                index += 1
                var value = ""
                var closed = false
                while index < characters.count {
                    let next = characters[index]
                    if next == "\\" {
                        guard index + 1 < characters.count else { break }
                        let escaped = characters[index + 1]
                        switch escaped {
                        case "n": value.append("\n")
                        case "t": value.append("\t")
                        case "\"", "\\": value.append(escaped)
                        default:
                            throw fail(
                                "unknown escape '\\\(escaped)' in a string; write '\\\\' for a backslash", at: index)
                        }
                        index += 2
                    } else if next == "\"" {
                        index += 1
                        closed = true
                        break
                    } else {
                        value.append(next)
                        index += 1
                    }
                }
                guard closed else { throw fail("the string that starts here is not closed with '\"'", at: start) }
                tokens.append(FilterToken(kind: .string(value), position: start))
            } else if character == "/" && Self.regexMayStart(after: tokens.last) {
                index += 1
                var pattern = ""
                var closed = false
                while index < characters.count {
                    if characters[index] == "\\" && index + 1 < characters.count {
                        pattern.append(characters[index])
                        pattern.append(characters[index + 1])
                        index += 2
                    } else if characters[index] == "/" {
                        index += 1
                        closed = true
                        break
                    } else {
                        pattern.append(characters[index])
                        index += 1
                    }
                }
                guard closed else {
                    throw fail("the regular expression that starts here is not closed with '/'", at: start)
                }
                tokens.append(FilterToken(kind: .regex(pattern), position: start))
            } else if let symbol = symbols.first(where: { Self.matches($0, characters, at: index) }) {
                index += symbol.count
                tokens.append(FilterToken(kind: .symbol(symbol), position: start))
            } else {
                throw fail("unexpected character '\(character)'", at: start)
            }
        }
        tokens.append(FilterToken(kind: .end, position: characters.count))
        return tokens
    }

    private static func matches(_ symbol: String, _ characters: [Character], at index: Int) -> Bool {
        let symbolCharacters = Array(symbol)
        guard index + symbolCharacters.count <= characters.count else { return false }
        return Array(characters[index..<index + symbolCharacters.count]) == symbolCharacters
    }

    /// A slash starts a regular expression only where a value may stand: after `(` or `,`.
    private static func regexMayStart(after token: FilterToken?) -> Bool {
        if case .symbol(let symbol)? = token?.kind { return symbol == "(" || symbol == "," || symbol == ":" }
        return false
    }
}
