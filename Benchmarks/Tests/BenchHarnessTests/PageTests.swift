import Foundation
import Testing

@testable import BenchHarness

#if canImport(FoundationXML)
    import FoundationXML
#endif

/// The results page `--page` writes: the generated part, and the charts beside it.
struct PageTests {
    private func result(_ workload: String, _ system: String, _ n: Int, _ median: Double) -> BenchmarkResult {
        var result = BenchmarkResult(
            workload: workload, system: system, n: n, status: .measured, timing: TimingSummary(seconds: [median]))
        result.peakResidentBytes = 10 << 20
        return result
    }

    private var run: [BenchmarkResult] {
        [
            result("insert", "inmemory", 10_000, 0.010), result("insert", "inmemory", 100_000, 0.120),
            result("insert", "array-baseline", 10_000, 0.002), result("insert", "array-baseline", 100_000, 0.030),
            result("insert", "sqlite-batch", 10_000, 0.020), result("insert", "sqlite-batch", 100_000, 0.250),
            result("insert", "sqlite-raw-history", 10_000, 0.010),
            result("insert", "sqlite-raw-history", 100_000, 0.100),
            result("fetch-unique", "sqlite", 10_000, 0.000_010), result("fetch-unique", "sqlite", 100_000, 0.000_012),
            result("fetch-unique", "sqlite-raw", 10_000, 0.000_004),
            result("fetch-unique", "sqlite-raw", 100_000, 0.000_004),
            BenchmarkResult(
                workload: "open", system: "inmemory", n: 100_000, status: .notApplicable("nothing on disk")),
        ]
    }

    /// The elements of an SVG text, which must parse as XML.
    private func elements(_ svg: String) throws -> [String] {
        final class Collector: NSObject, XMLParserDelegate {
            var names: [String] = []
            func parser(
                _ parser: XMLParser, didStartElement name: String, namespaceURI: String?, qualifiedName: String?,
                attributes: [String: String] = [:]
            ) { names.append(name) }
        }
        let parser = XMLParser(data: Data(svg.utf8))
        let collector = Collector()
        parser.delegate = collector
        #expect(parser.parse(), "the SVG parses: \(parser.parserError.map { "\($0)" } ?? "")")
        return collector.names
    }

    @Test func theSectionHasATablePerFamilyWithRatiosToTheLimit() {
        let section = Page.section(run, run: "Machine: a test.")
        #expect(section.contains("## The run\n\nMachine: a test.\n\nA load average"))
        let joined = Page.section(run, run: "Machine: one.\nRun: first.\n\n\nMachine: two.\nRun: second.\n")
        #expect(joined.contains("The page joins 2 runs"))
        #expect(joined.contains("Machine: one.\nRun: first.\n\nMachine: two.\nRun: second.\n\n"))
        #expect(section.contains("### Inserting"))
        #expect(section.contains("### Fetching"))
        #expect(!section.contains("### Opening"), "a family with only n/a rows has no table")
        // inmemory at 100k: 120 ms over the array's 30 ms; sqlite-batch over sqlite-raw-history: 2.5×.
        #expect(section.contains("| `insert` | `inmemory` | 10 ms | 120 ms | – | 4× | 10.0 MiB |"))
        #expect(section.contains("| `insert` | `sqlite-batch` | 20 ms | 250 ms | – | 2.5× | 10.0 MiB |"))
        #expect(section.contains("| `fetch-unique` | `sqlite` | 10 µs | 12 µs | – | 3× | 10.0 MiB |"))
        #expect(section.contains("`open` on `inmemory`"), "n/a rows are listed in a sentence")
        #expect(section.contains("## Goals"))
        #expect(section.contains("![Time over the limit"))
        #expect(section.contains("(results/time-insert.svg)"))
    }

    @Test func aRatioFallsBackToTheLargestSizeBothWereMeasuredAtAndSaysSo() {
        let results = run + [result("insert", "inmemory", 1_000_000, 1.5)]
        let section = Page.section(results, run: "")
        #expect(section.contains("| `insert` | `inmemory` | 10 ms | 120 ms | 1.5 s | – | 4× (100k) | 10.0 MiB |"))
        #expect(section.contains("| `insert` | `array-baseline` | 2 ms | 30 ms |  | – | – | 10.0 MiB (100k) |"))
    }

    /// The page's saved results join several runs, each with its `RUN` line: drawing the page
    /// again from them must list every run, not only the first.
    @Test func everyRunOfASavedResultsFileIsRead() throws {
        let first = "Machine: A.\nRun: 2026-11-25 21:50 UTC, command `modelstore-bench`."
        let second = "Machine: B.\nRun: 2026-11-26 03:04 UTC, command `modelstore-bench --sizes 10000`."
        func line(_ run: String) throws -> String {
            Page.runPrefix + String(decoding: try JSONEncoder().encode(run), as: UTF8.self)
        }
        let text = [try line(first), try line("\n" + second), #"MEASUREMENT {"workload":"insert"}"#]
            .joined(separator: "\n")
        #expect(Page.runDescriptions(in: text) == [first, second])
        #expect(Page.runDescriptions(in: #"MEASUREMENT {"workload":"insert"}"#).isEmpty)
    }

    @Test func theGeneratedPartReplacesOnlyWhatIsBetweenTheMarkers() throws {
        let page = "# Title\n\nBy hand.\n\n\(Page.begin)\n\nold numbers\n\n\(Page.end)\n\nMore by hand.\n"
        let updated = try Page.replacingSection(in: page, with: "new numbers")
        #expect(updated.hasPrefix("# Title\n\nBy hand.\n\n\(Page.begin)\n\nnew numbers\n\(Page.end)"))
        #expect(updated.hasSuffix("\(Page.end)\n\nMore by hand.\n"))
        #expect(!updated.contains("old numbers"))
        #expect(throws: OptionsError.self) { try Page.replacingSection(in: "# No markers\n", with: "x") }
    }

    @Test func theRatioChartDrawsOneBarPerMeasuredRatio() throws {
        let charts = Page.charts(run)
        let ratios = try #require(charts.first { $0.file == "ratios-limit.svg" })
        let names = try elements(ratios.svg)
        #expect(names.first == "svg")
        // inmemory/insert, sqlite-batch/insert, sqlite/fetch-unique: three bars, each a rect with a title.
        #expect(ratios.svg.contains("<title>inmemory, insert: 4×</title>"))
        #expect(ratios.svg.contains("<title>sqlite-batch, insert: 2.5×</title>"))
        #expect(ratios.svg.contains("<title>sqlite, fetch-unique: 3×</title>"))
        #expect(ratios.svg.components(separatedBy: "</title></rect>").count - 1 == 3)
    }

    @Test func aStoreThatFsyncsHasNoLimitForWritesButHasOneForReads() {
        #expect(Catalog.limit(of: "jsonfile", workload: "insert") == nil)
        #expect(Catalog.limit(of: "jsonfile", workload: "fetch-all") == "array-baseline")
        #expect(Catalog.limit(of: "sqlite-sync", workload: "update-one") == nil)
        #expect(Catalog.limit(of: "sqlite-sync", workload: "fetch-unique") == "sqlite-raw")
        #expect(Catalog.limit(of: "sqlite-batch", workload: "insert") == "sqlite-raw-history")
        #expect(Catalog.limit(of: "grdb-file", workload: "insert") == nil, "peers have no limit of their own")
    }

    @Test func theGRDBChartDividesByThePeerOfTheSameDurability() throws {
        let results = [
            result("delete-all", "jsonfile", 10_000, 0.004), result("delete-all", "grdb-file-sync", 10_000, 0.002),
            result("delete-all", "grdb-file", 10_000, 0.001),
        ]
        let chart = try #require(Page.charts(results).first { $0.file == "ratios-grdb.svg" })
        #expect(chart.svg.contains("<title>jsonfile, delete-all: 2×</title>"))
    }

    @Test func eachWorkloadMeasuredAtTwoSizesGetsATimeChart() throws {
        let charts = Page.charts(run)
        #expect(Set(charts.map(\.file)) == ["ratios-limit.svg", "time-insert.svg", "time-fetch-unique.svg"])
        let insert = try #require(charts.first { $0.file == "time-insert.svg" })
        let names = try elements(insert.svg)
        #expect(names.filter { $0 == "polyline" }.count == 4, "one line per system")
        #expect(insert.svg.contains(">10k</text>") && insert.svg.contains(">100k</text>"))
        #expect(Page.charts([result("insert", "inmemory", 10_000, 1)]).isEmpty, "one size and no peer: no chart")
    }

    @Test func theClassHierarchyTableDividesByTheFlatFetchOfTheSameSystem() throws {
        let results = [
            result("hierarchy-base", "inmemory", 10_000, 0.0012), result("hierarchy-base", "inmemory", 100_000, 0.015),
            result("hierarchy-flat", "inmemory", 10_000, 0.001), result("hierarchy-flat", "inmemory", 100_000, 0.01),
            result("hierarchy-subclass", "inmemory", 10_000, 0.0003),
            result("hierarchy-subclass", "inmemory", 100_000, 0.004),
            result("hierarchy-flat", "sqlite", 100_000, 0.05),
        ]
        let section = Page.section(results, run: "Machine: a test.")
        #expect(section.contains("### Class hierarchy"))
        #expect(section.contains("| workload | system | 10k | 100k | × `hierarchy-flat` | peak RSS |"))
        let joined = Page.charts(results + [result("fetch-all", "inmemory", 1_000_000, 0.2)])
        let flatAt100k = try #require(joined.first { $0.file == "ratios-flat.svg" })
        #expect(flatAt100k.title.hasSuffix("100k"), "drawn at the hierarchy's largest size, not another run's")
        #expect(section.contains("| `hierarchy-base` | `inmemory` | 1.2 ms | 15 ms | 1.5× | 10.0 MiB |"))
        #expect(section.contains("| `hierarchy-subclass` | `inmemory` | 300 µs | 4 ms | 0.4× | 10.0 MiB |"))
        #expect(section.contains("| `hierarchy-flat` | `sqlite` |  | 50 ms | 1× | 10.0 MiB |"))
        let charts = Page.charts(results)
        let flat = try #require(charts.first { $0.file == "ratios-flat.svg" })
        #expect(flat.svg.contains("<title>inmemory, hierarchy-base: 1.5×</title>"))
        #expect(flat.svg.contains("<title>inmemory, hierarchy-subclass: 0.4×</title>"))
        #expect(flat.svg.components(separatedBy: "</title></rect>").count - 1 == 2)
        #expect(!charts.contains { $0.file == "ratios-limit.svg" }, "the hierarchy has no limit of its own")
        #expect(charts.contains { $0.file == "time-hierarchy-base.svg" })
    }

    @Test func theLogScalePlacesPowersOfTenEvenly() {
        let scale = LogScale([0.3, 42], from: 100, to: 0)
        #expect(scale.lower == 0.1 && scale.upper == 100)
        #expect(scale.ticks.map(\.value) == [0.1, 1, 10, 100])
        #expect(abs(scale.position(1) - 66.666) < 0.01)
        #expect(scale.position(100) == 0)
    }
}
