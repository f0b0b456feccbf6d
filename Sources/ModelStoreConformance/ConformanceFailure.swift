import Foundation
import ModelStore

/// Why a conformance case failed: what the adapter did wrong, in a user's words, with the
/// expected and the found values.
///
/// Cases throw this error instead of asserting, in the manner of swift-nio's verifiers, so the
/// suite works under any test framework (or none) and links no test library:
///
/// ```
/// fetch.offsetAndLimit: fetch with fetchOffset 2 returned the first item: offset ignored
///   expected: ["S03", "S04"]
///   found:    ["S01", "S02"]
/// ```
public struct ConformanceFailure: Error, Sendable, CustomStringConvertible {
    /// The identifier of the case that failed (``ConformanceCase/id``).
    public var caseID: String
    /// What went wrong, in a user's words, naming the symptom (for example "offset ignored").
    public var message: String
    /// What the suite expected, rendered for reading; `nil` when the message says it all.
    public var expected: String?
    /// What the adapter produced instead; `nil` when the message says it all.
    public var found: String?
    /// The error the adapter threw, when an unexpected error caused the failure.
    public var underlyingError: (any Error & Sendable)?
    /// Where in the suite the check that failed is (`file:line`).
    public var location: String

    /// Creates a failure. Cases create failures through their environment; adapter authors rarely need to.
    public init(
        caseID: String = "",
        message: String,
        expected: String? = nil,
        found: String? = nil,
        underlyingError: (any Error & Sendable)? = nil,
        file: String = #fileID,
        line: Int = #line
    ) {
        self.caseID = caseID
        self.message = message
        self.expected = expected
        self.found = found
        self.underlyingError = underlyingError
        self.location = "\(file):\(line)"
    }

    /// `case: message`, then the expected and found values on their own lines.
    public var description: String {
        var text = caseID.isEmpty ? message : "\(caseID): \(message)"
        if let expected { text += "\n  expected: \(expected)" }
        if let found { text += "\n  found:    \(found)" }
        if let underlyingError { text += "\n  error:    \(underlyingError)" }
        text += "\n  (checked at \(location))"
        return text
    }
}
