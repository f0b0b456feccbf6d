import Foundation

/// SVG charts of a run, drawn without any library: grouped bars on a logarithmic axis and lines
/// on logarithmic axes. Every number a chart shows comes from the run's measurements.
public enum Chart {
    /// One series of a chart: a name for the legend and its values, `nil` where not measured.
    public struct Series: Sendable, Hashable {
        /// The legend's name.
        public var name: String
        /// One value per group (bars) or per x position (lines); `nil` leaves a gap.
        public var values: [Double?]

        /// A series.
        public init(name: String, values: [Double?]) {
            self.name = name
            self.values = values
        }
    }

    private static let palette = [
        "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22",
        "#17becf", "#393b79", "#637939", "#8c6d31", "#843c39", "#7b4173", "#3182bd",
    ]

    private static let width = 860.0
    private static let plotLeft = 70.0
    private static let plotTop = 40.0
    private static let plotHeight = 300.0

    /// Bars grouped by `groups` (one bar per series in each group), on a logarithmic axis, with a
    /// dashed line at `reference` (1× for ratios).
    public static func bars(title: String, axis: String, groups: [String], series: [Series], reference: Double?)
        -> String
    {
        let values = series.flatMap { $0.values.compactMap { $0 } }.filter { $0 > 0 } + (reference.map { [$0] } ?? [])
        let scale = LogScale(values, from: plotTop + plotHeight, to: plotTop)
        let plotWidth = width - plotLeft - 20
        let groupWidth = plotWidth / Double(max(groups.count, 1))
        let barWidth = groupWidth * 0.8 / Double(max(series.count, 1))
        var body: [String] = []
        body += axisLines(scale, label: axis, right: plotLeft + plotWidth)
        for (groupIndex, group) in groups.enumerated() {
            let left = plotLeft + Double(groupIndex) * groupWidth + groupWidth * 0.1
            for (seriesIndex, one) in series.enumerated() {
                guard groupIndex < one.values.count, let value = one.values[groupIndex], value > 0 else { continue }
                let x = left + Double(seriesIndex) * barWidth
                let y = scale.position(value)
                let base = scale.position(scale.lower)
                body.append(
                    "<rect x=\"\(f(x))\" y=\"\(f(min(y, base)))\" width=\"\(f(max(barWidth - 1, 1)))\" "
                        + "height=\"\(f(abs(base - y)))\" fill=\"\(color(seriesIndex))\">"
                        + "<title>\(escape(one.name)), \(escape(group)): \(Report.factor(value))</title></rect>")
            }
            body.append(
                "<text x=\"\(f(left + groupWidth * 0.4))\" y=\"\(f(plotTop + plotHeight + 16))\" "
                    + "text-anchor=\"middle\" font-size=\"11\">\(escape(group))</text>")
        }
        if let reference {
            let y = scale.position(reference)
            body.append(
                "<line x1=\"\(f(plotLeft))\" y1=\"\(f(y))\" x2=\"\(f(plotLeft + plotWidth))\" y2=\"\(f(y))\" "
                    + "stroke=\"#000\" stroke-dasharray=\"4 3\"/>")
        }
        return document(title: title, body: body, legend: series.map(\.name))
    }

    /// Lines over `xs` (sizes) on logarithmic axes, one per series, with a point at each value.
    public static func lines(title: String, axis: String, xs: [Double], xLabels: [String], series: [Series])
        -> String
    {
        let values = series.flatMap { $0.values.compactMap { $0 } }.filter { $0 > 0 }
        let scale = LogScale(values, from: plotTop + plotHeight, to: plotTop)
        let plotWidth = width - plotLeft - 20
        let xScale = LogScale(xs, from: plotLeft + 20, to: plotLeft + plotWidth - 20, padded: false)
        var body = axisLines(scale, label: axis, right: plotLeft + plotWidth)
        for (index, x) in xs.enumerated() {
            body.append(
                "<text x=\"\(f(xScale.position(x)))\" y=\"\(f(plotTop + plotHeight + 16))\" text-anchor=\"middle\" "
                    + "font-size=\"11\">\(escape(index < xLabels.count ? xLabels[index] : ""))</text>")
        }
        for (seriesIndex, one) in series.enumerated() {
            let points = zip(xs, one.values).compactMap { x, value -> (Double, Double)? in
                guard let value, value > 0 else { return nil }
                return (xScale.position(x), scale.position(value))
            }
            guard !points.isEmpty else { continue }
            let path = points.map { "\(f($0.0)),\(f($0.1))" }.joined(separator: " ")
            body.append(
                "<polyline points=\"\(path)\" fill=\"none\" stroke=\"\(color(seriesIndex))\" stroke-width=\"2\"/>")
            for point in points {
                body.append(
                    "<circle cx=\"\(f(point.0))\" cy=\"\(f(point.1))\" r=\"3\" fill=\"\(color(seriesIndex))\">"
                        + "<title>\(escape(one.name))</title></circle>")
            }
        }
        return document(title: title, body: body, legend: series.map(\.name))
    }

    // MARK: Parts

    /// The vertical axis: a line per power of ten (and its label), the axis title.
    private static func axisLines(_ scale: LogScale, label: String, right: Double) -> [String] {
        var lines: [String] = []
        for tick in scale.ticks {
            let y = scale.position(tick.value)
            lines.append(
                "<line x1=\"\(f(plotLeft))\" y1=\"\(f(y))\" x2=\"\(f(right))\" y2=\"\(f(y))\" stroke=\"#ddd\"/>")
            lines.append(
                "<text x=\"\(f(plotLeft - 6))\" y=\"\(f(y + 4))\" text-anchor=\"end\" font-size=\"11\">"
                    + "\(escape(tick.label))</text>")
        }
        lines.append(
            "<line x1=\"\(f(plotLeft))\" y1=\"\(f(plotTop))\" x2=\"\(f(plotLeft))\" "
                + "y2=\"\(f(plotTop + plotHeight))\" stroke=\"#000\"/>")
        lines.append(
            "<text x=\"14\" y=\"\(f(plotTop + plotHeight / 2))\" font-size=\"12\" text-anchor=\"middle\" "
                + "transform=\"rotate(-90 14 \(f(plotTop + plotHeight / 2)))\">\(escape(label))</text>")
        return lines
    }

    private static func document(title: String, body: [String], legend: [String]) -> String {
        let columns = 4
        let legendTop = plotTop + plotHeight + 34
        let rows = (legend.count + columns - 1) / columns
        let height = legendTop + Double(rows) * 18 + 10
        var lines = [
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"\(f(width))\" height=\"\(f(height))\" "
                + "viewBox=\"0 0 \(f(width)) \(f(height))\" font-family=\"sans-serif\">",
            "<rect width=\"100%\" height=\"100%\" fill=\"#fff\"/>",
            "<text x=\"\(f(width / 2))\" y=\"22\" text-anchor=\"middle\" font-size=\"15\">\(escape(title))</text>",
        ]
        lines += body
        for (index, name) in legend.enumerated() {
            let x = plotLeft + Double(index % columns) * 190
            let y = legendTop + Double(index / columns) * 18
            lines.append("<rect x=\"\(f(x))\" y=\"\(f(y - 9))\" width=\"10\" height=\"10\" fill=\"\(color(index))\"/>")
            lines.append("<text x=\"\(f(x + 14))\" y=\"\(f(y))\" font-size=\"11\">\(escape(name))</text>")
        }
        lines.append("</svg>")
        return lines.joined(separator: "\n") + "\n"
    }

    private static func color(_ index: Int) -> String { palette[index % palette.count] }

    private static func f(_ value: Double) -> String { String(format: "%.1f", value) }

    static func escape(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "\"", with: "&quot;")
    }
}

/// A logarithmic scale from the powers of ten around some values to a span of pixels.
struct LogScale {
    let lower: Double
    let upper: Double
    private let from: Double
    private let to: Double

    /// A scale over `values` (positive), widened to whole powers of ten unless `padded` is false.
    init(_ values: [Double], from: Double, to: Double, padded: Bool = true) {
        let positive = values.filter { $0 > 0 && $0.isFinite }
        var low = positive.min() ?? 1
        var high = positive.max() ?? 10
        if padded {
            low = pow(10, floor(log10(low)))
            high = pow(10, ceil(log10(high)))
        }
        if high <= low { high = low * 10 }
        lower = low
        upper = high
        self.from = from
        self.to = to
    }

    /// The pixel of a value.
    func position(_ value: Double) -> Double {
        let fraction = (log10(max(value, lower)) - log10(lower)) / (log10(upper) - log10(lower))
        return from + (to - from) * fraction
    }

    /// The powers of ten within the scale, with labels.
    var ticks: [(value: Double, label: String)] {
        var ticks: [(Double, String)] = []
        var exponent = Int(floor(log10(lower)))
        while pow(10, Double(exponent)) <= upper * 1.000_001 {
            let value = pow(10, Double(exponent))
            if value >= lower * 0.999_999 { ticks.append((value, Self.label(value))) }
            exponent += 1
        }
        return ticks
    }

    private static func label(_ value: Double) -> String {
        value >= 1 && value < 1e6 ? String(format: "%.0f", value) : String(format: "%g", value)
    }
}
