import Foundation
import ModelStoreConformance
import Testing

/// The guide to running the suite has one source, the DocC article, and it covers every group.
struct ConformanceDocsTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()
    static let article = root.appendingPathComponent("Sources/ModelStore/ModelStore.docc/RunningTheConformanceSuite.md")
    static let pointer = root.appendingPathComponent("Sources/ModelStoreConformance/RUNNING.md")

    @Test func runningGuideIsOnlyAPointerToTheArticle() throws {
        let text = try String(contentsOf: Self.pointer, encoding: .utf8)
        #expect(text.contains("ModelStore.docc/RunningTheConformanceSuite.md"))
        #expect(text.split(separator: "\n").count < 10, "RUNNING.md must point to the article, not repeat it")
    }

    @Test func articleDescribesEveryGroup() throws {
        let text = try String(contentsOf: Self.article, encoding: .utf8)
        for group in ConformanceGroup.allCases {
            #expect(
                text.contains("**\(group.rawValue)**"), "the article does not describe the group '\(group.rawValue)'")
        }
    }
}
