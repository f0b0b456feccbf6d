/// A filter the studio could not read: what is wrong and where, as an offset into the text.
public struct FilterSyntaxError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What is wrong, quoting the text in single quotes.
    public let message: String
    /// The offset of the error in the filter, in characters from 0.
    public let position: Int
    /// The filter as typed.
    public let text: String

    /// An error at a position of a filter.
    public init(_ message: String, at position: Int, in text: String) {
        self.message = message
        self.position = position
        self.text = text
    }

    /// The filter with a caret under the error, then the message.
    public var description: String {
        "\(text)\n\(String(repeating: " ", count: position))^\n\(message) (at character \(position + 1))"
    }
}
