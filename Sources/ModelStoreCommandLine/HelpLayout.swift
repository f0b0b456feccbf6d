/// Lays help text out for an 80-column terminal: prose filled to the width, terms and their
/// descriptions in two columns whose descriptions wrap under themselves.
enum HelpLayout {
    /// The width every line of help fits in.
    static let width = 80

    /// `text` with each paragraph of prose (consecutive lines that do not start with a space)
    /// filled to ``width``; blank and indented lines (examples, lists) are kept as written.
    static func reflow(_ text: String) -> [String] {
        var lines: [String] = []
        var paragraph: [Substring] = []
        func flush() {
            if !paragraph.isEmpty { lines += fill(paragraph.joined(separator: " "), indent: "") }
            paragraph = []
        }
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.isEmpty || line.first == " " {
                flush()
                lines.append(String(line))
            } else {
                paragraph.append(line)
            }
        }
        flush()
        return lines
    }

    /// The words of `text` filled into lines of at most ``width`` characters, the first line
    /// starting with `first` (`indent` when nil) and the others with `indent`. A word longer than
    /// a line gets a line of its own.
    static func fill(_ text: String, indent: String, first: String? = nil) -> [String] {
        var lines: [String] = []
        var line = first ?? indent
        var isEmpty = true
        for word in text.split(separator: " ") {
            if !isEmpty && line.count + 1 + word.count > width {
                lines.append(line)
                line = indent
                isEmpty = true
            }
            line += (isEmpty ? "" : " ") + word
            isEmpty = false
        }
        if !isEmpty || lines.isEmpty { lines.append(line) }
        return lines
    }

    /// Terms indented by two spaces and their descriptions in a second column.
    ///
    /// The column starts two spaces after the longest term, but no further right than
    /// `maximumColumn`; a description whose term reaches its column starts on the next line. A
    /// term wider than the page wraps with its continuation indented by four spaces.
    static func definitions(_ rows: [(term: String, description: String)], maximumColumn: Int = 26) -> [String] {
        let longest = rows.map(\.term.count).max() ?? 0
        let column = min(2 + longest + 2, maximumColumn)
        let hanging = String(repeating: " ", count: column)
        var lines: [String] = []
        for row in rows {
            let term = fill(row.term, indent: "    ", first: "  ")
            if term.count == 1 && term[0].count + 2 <= column {
                let first = term[0] + String(repeating: " ", count: column - term[0].count)
                lines += fill(row.description, indent: hanging, first: first)
            } else {
                lines += term + fill(row.description, indent: hanging)
            }
        }
        return lines
    }
}
