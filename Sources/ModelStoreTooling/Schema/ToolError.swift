import ModelStore

/// A failure `modelstore` reports: what failed, on what, how to fix it, and the exit status.
package struct ToolError: Error, Encodable, CustomStringConvertible {
    /// The exit status the failure ends the tool with.
    package var status: ExitStatus
    /// A short name for the kind of failure: a `DataStoreError` code, or `usage` and the like.
    package var code: String
    /// What failed and on what, with names quoted in single quotes.
    package var message: String
    /// How to fix it, when there is something to do.
    package var remedy: String?

    /// A failure.
    package init(_ status: ExitStatus, code: String, _ message: String, remedy: String? = nil) {
        self.status = status
        self.code = code
        self.message = message
        self.remedy = remedy
    }

    /// A store error, keeping its code, message and remedy.
    package init(_ error: DataStoreError) {
        self.init(ExitStatus(error.code), code: error.code.name, error.message, remedy: error.remedy)
    }

    /// A wrong command line.
    package static func usage(_ message: String, remedy: String) -> ToolError {
        ToolError(.usage, code: "usage", message, remedy: remedy)
    }

    /// A command that does not apply to a store's scheme.
    package static func unsupported(_ message: String, remedy: String) -> ToolError {
        ToolError(.unsupported, code: DataStoreError.Code.unsupportedFeature.name, message, remedy: remedy)
    }

    /// `message. remedy`.
    package var description: String {
        remedy.map { "\(message). \($0)" } ?? message
    }

    private enum CodingKeys: String, CodingKey { case status, code, message, remedy }

    /// Encodes the status as its number, with the code, message and remedy.
    package func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(status.rawValue, forKey: .status)
        try container.encode(code, forKey: .code)
        try container.encode(message, forKey: .message)
        try container.encodeIfPresent(remedy, forKey: .remedy)
    }
}
