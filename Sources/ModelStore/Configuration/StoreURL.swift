import Foundation

/// A store named by a string such as `memory:`, `json:trips.json` or `log:data?durability=everySave`.
///
/// The grammar is `SCHEME:LOCATION[?NAME=VALUE&…]`:
///
/// - `SCHEME` starts with a letter and continues with letters, digits, `+`, `-` or `.`; it is
///   case-insensitive and kept in lowercase.
/// - `LOCATION` is everything up to the first `?`: a path, a name, or nothing. Percent escapes
///   (`%20`) are decoded; a leading `//` is dropped, so `json:///tmp/trips.json` and
///   `json:/tmp/trips.json` name the same file.
/// - Options follow the `?` as `NAME=VALUE` pairs separated by `&`.
///
/// Parsing checks only the grammar. Which schemes exist, whether a scheme needs a location and
/// which options it takes is the business of the ``StoreRegistry`` and its ``StoreScheme``s.
public struct StoreURL: Sendable, Hashable, CustomStringConvertible {
    /// The string as it was written.
    public let string: String
    /// The scheme, in lowercase, without the colon.
    public let scheme: String
    /// The location after the colon, decoded; empty when there is none.
    public let location: String
    /// The options, in the order written.
    public let options: [Option]

    /// One `NAME=VALUE` option of a store URL.
    public struct Option: Sendable, Hashable {
        /// The option's name.
        public let name: String
        /// The option's value, decoded.
        public let value: String

        /// An option.
        public init(name: String, value: String) {
            self.name = name
            self.value = value
        }
    }

    /// Parses a store URL.
    ///
    /// Throws ``DataStoreError/Code/invalidConfiguration`` naming the string and saying what was
    /// expected when it is empty, has no scheme, or has a malformed, empty or repeated option.
    public init(_ string: String) throws {
        self.string = string
        let trimmed = string.trimmingCharacters(in: .whitespaces)
        guard !trimmed.isEmpty else {
            throw DataStoreError(
                .invalidConfiguration, "the store URL is empty",
                remedy: "Write SCHEME:LOCATION, for example 'memory:' or 'json:trips.json'")
        }
        guard let colon = trimmed.firstIndex(of: ":"), Self.isScheme(trimmed[..<colon]) else {
            throw DataStoreError(
                .invalidConfiguration,
                "the store URL '\(Self.redactingPassword(in: string))' does not start with a scheme",
                remedy: "Write SCHEME:LOCATION, for example 'json:\(trimmed)' or 'memory:'")
        }
        scheme = trimmed[..<colon].lowercased()
        let rest = trimmed[trimmed.index(after: colon)...]
        let question = rest.firstIndex(of: "?")
        var rawLocation = question.map { rest[..<$0] } ?? rest
        if rawLocation.hasPrefix("//") { rawLocation = rawLocation.dropFirst(2) }
        location = Self.decode(rawLocation)
        guard let question else {
            options = []
            return
        }
        var options: [Option] = []
        for item in rest[rest.index(after: question)...].split(separator: "&", omittingEmptySubsequences: true) {
            guard let equals = item.firstIndex(of: "="), equals != item.startIndex else {
                throw DataStoreError(
                    .invalidConfiguration,
                    "the option '\(item)' of the store URL '\(Self.redactingPassword(in: string))' is not NAME=VALUE",
                    remedy: "Write options as '?NAME=VALUE&NAME=VALUE'")
            }
            let option = Option(
                name: Self.decode(item[..<equals]), value: Self.decode(item[item.index(after: equals)...]))
            if options.contains(where: { $0.name == option.name }) {
                throw DataStoreError(
                    .invalidConfiguration,
                    "the store URL '\(Self.redactingPassword(in: string))' gives the option '\(option.name)' twice",
                    remedy: "Keep one '\(option.name)=…'")
            }
            options.append(option)
        }
        self.options = options
    }

    /// The value of the option with this name, if the URL has it.
    public func option(_ name: String) -> String? {
        options.first { $0.name == name }?.value
    }

    /// The location as a file URL: `~` is expanded and a relative path is resolved against the
    /// current directory.
    public var fileURL: URL {
        let expanded = NSString(string: location).expandingTildeInPath
        return URL(fileURLWithPath: expanded).standardizedFileURL
    }

    /// The string as it was written.
    public var description: String { redacted }

    /// The string with the password of a `scheme://user:password@host…` URL replaced by `***`: what
    /// messages and logs show, so a password in a URL never reaches them.
    public var redacted: String { Self.redactingPassword(in: string) }

    /// `string` with the password of a `scheme://user:password@host…` URL replaced by `***`; any
    /// other string is returned unchanged.
    public static func redactingPassword(in string: String) -> String {
        guard let start = string.range(of: "://") else { return string }
        let end = string[start.upperBound...].firstIndex { $0 == "/" || $0 == "?" } ?? string.endIndex
        let authority = string[start.upperBound..<end]
        guard let at = authority.lastIndex(of: "@"), let colon = authority[..<at].firstIndex(of: ":") else {
            return string
        }
        return String(string[...colon]) + "***" + String(string[at...])
    }

    private static func isScheme(_ text: Substring) -> Bool {
        guard let first = text.unicodeScalars.first, first.isASCII, first.properties.isAlphabetic else { return false }
        let punctuation = "+-.".unicodeScalars
        return text.unicodeScalars.allSatisfy { scalar in
            scalar.isASCII
                && (scalar.properties.isAlphabetic || ("0"..."9").contains(scalar) || punctuation.contains(scalar))
        }
    }

    /// Decodes percent escapes; text with a stray `%` (as in `100%.json`) is kept as written.
    private static func decode(_ text: Substring) -> String {
        String(text).removingPercentEncoding ?? String(text)
    }
}
