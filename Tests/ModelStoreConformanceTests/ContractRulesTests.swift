import Foundation
import ModelStoreConformance
import Testing

/// Every numbered MUST rule of the store protocols has cases, named in the suite's list and in the
/// article's table: the rules are read from the protocols' own documentation, so a rule added there
/// without cases fails here.
struct ContractRulesTests {
    static let root = ConformanceDocsTests.root
    /// The files whose protocols number their implementation requirements.
    static let protocolSources = [
        "Sources/ModelStore/Store/DataStore.swift", "Sources/ModelStore/Store/DataStoreAsynchronous.swift",
        "Sources/ModelStore/Store/DataStoreBatching.swift",
        "Sources/ModelStoreTooling/Maintenance/DataStoreMaintenance.swift",
        "Sources/ModelStore/Store/DataStoreRequests.swift", "Sources/ModelStore/Store/DataStoreTwoPhaseSaving.swift",
        "Sources/ModelStore/Query/DataStoreQuerying.swift", "Sources/ModelStore/History/HistoryProviding.swift",
    ]

    /// The numbered rules with a MUST in a protocol's doc comment, as `"Protocol N"`.
    static func rules(inSource text: String) -> Set<String> {
        var rules: Set<String> = []
        var comment: [String] = []
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if trimmed.hasPrefix("///") {
                comment.append(String(trimmed.dropFirst(3)))
                continue
            }
            if let name = protocolName(in: trimmed) {
                var number: Int?
                var body = ""
                func close() {
                    if let number, body.contains("MUST") { rules.insert("\(name) \(number)") }
                }
                for commentLine in comment {
                    let item = commentLine.trimmingCharacters(in: .whitespaces)
                    if let dot = item.firstIndex(of: "."), let value = Int(item[..<dot]),
                        item[item.index(after: dot)...].hasPrefix(" ")
                    {
                        close()
                        number = value
                        body = item
                    } else if item.isEmpty || !commentLine.hasPrefix("    ") {
                        close()
                        number = nil
                        body = ""
                    } else {
                        body += " " + item
                    }
                }
                close()
            }
            comment = []
        }
        return rules
    }

    /// The protocol a declaration line declares, if it is one.
    static func protocolName(in line: String) -> String? {
        guard line.hasPrefix("public protocol ") else { return nil }
        let rest = line.dropFirst("public protocol ".count)
        return String(rest.prefix { $0.isLetter || $0.isNumber })
    }

    @Test func theParserFindsNumberedRules() {
        let source = """
            /// A store.
            ///
            /// 1. It MUST work,
            ///    and MUST go on working.
            /// 2. It may rest.
            ///
            /// 3. It MUST NOT stop.
            public protocol Sample: AnyObject {
            """
        #expect(Self.rules(inSource: source) == ["Sample 1", "Sample 3"])
    }

    @Test func everyNumberedRuleHasCases() throws {
        var found: Set<String> = []
        for path in Self.protocolSources {
            let text = try String(contentsOf: Self.root.appendingPathComponent(path), encoding: .utf8)
            found.formUnion(Self.rules(inSource: text))
        }
        #expect(found.count >= 20, "the parser found only \(found.sorted())")
        let listed = Set(ConformanceSuite.contractRules.map(\.id))
        for rule in found.subtracting(listed).sorted() {
            Issue.record("the protocols' rule '\(rule)' is missing from ConformanceSuite.contractRules")
        }
        for rule in listed.subtracting(found).sorted() {
            Issue.record("ConformanceSuite.contractRules lists '\(rule)', which no protocol numbers with a MUST")
        }
        let cases = Set(ConformanceSuite.caseIdentifiers)
        for rule in ConformanceSuite.contractRules {
            #expect(!rule.caseIDs.isEmpty, "the rule '\(rule.id)' names no case")
            for id in rule.caseIDs where !cases.contains(id) {
                Issue.record("the rule '\(rule.id)' names the case '\(id)', which the suite does not have")
            }
        }
    }

    @Test func theArticleTableMapsEveryRuleToItsCases() throws {
        let text = try String(contentsOf: ConformanceDocsTests.article, encoding: .utf8)
        let rows = text.split(separator: "\n").filter { $0.hasPrefix("| `") }
        for rule in ConformanceSuite.contractRules {
            let row = rows.first { $0.hasPrefix("| `\(rule.id)` |") }
            guard let row else {
                Issue.record("the article's table of rules has no row '| `\(rule.id)` |'")
                continue
            }
            for id in rule.caseIDs where !row.contains("`\(id)`") {
                Issue.record("the article's row for '\(rule.id)' does not name the case '\(id)'")
            }
        }
    }
}
