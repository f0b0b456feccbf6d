import Foundation
import ModelStore

/// Small text helpers for the reports people read, shared by tools and the maintenance reports of
/// adapters (``DataStoreMaintenance``).
public enum ReportFormat {
    /// A size for people: `812 B`, `12.3 KiB`, `4.5 MiB`.
    public static func bytes(_ count: Int) -> String {
        let units = ["B", "KiB", "MiB", "GiB", "TiB"]
        var value = Double(count)
        var unit = 0
        while value >= 1024 && unit < units.count - 1 {
            value /= 1024
            unit += 1
        }
        return unit == 0 ? "\(count) B" : String(format: "%.1f %@", value, units[unit])
    }

    /// `1 model`, `3 models`.
    public static func count(_ count: Int, _ noun: String) -> String {
        "\(count) \(noun)\(count == 1 ? "" : "s")"
    }

    /// A fraction as a percentage with one decimal: `49.8%`.
    public static func percent(_ fraction: Double) -> String {
        String(format: "%.1f%%", fraction * 100)
    }

    /// Rows of cells as aligned columns, indented; numeric-looking columns are right-aligned.
    public static func table(_ rows: [[String]], indent: String = "  ") -> [String] {
        guard let columns = rows.map(\.count).max(), columns > 0 else { return [] }
        var widths = [Int](repeating: 0, count: columns)
        var numeric = [Bool](repeating: true, count: columns)
        for row in rows {
            for (index, cell) in row.enumerated() {
                widths[index] = max(widths[index], cell.count)
                if let first = cell.first, !first.isNumber { numeric[index] = false }
            }
        }
        return rows.map { row in
            let cells = row.enumerated().map { index, cell in
                let padding = String(repeating: " ", count: widths[index] - cell.count)
                if numeric[index] { return padding + cell }
                return index == row.count - 1 ? cell : cell + padding
            }
            let line = indent + cells.joined(separator: "  ")
            return String(line.reversed().drop { $0 == " " }.reversed())
        }
    }
}
