import Foundation
import ModelStoreConformance
import Testing

/// The suite's guides have one source each, a DocC article; the files beside the suite only point to
/// them, and the running guide covers every group.
struct ConformanceDocsTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()
    static let article = root.appendingPathComponent("Sources/ModelStore/ModelStore.docc/RunningTheConformanceSuite.md")

    /// Each pointer file beside the suite, with the article it points to.
    static let pointers = [
        ("Sources/ModelStoreConformance/RUNNING.md", "RunningTheConformanceSuite.md"),
        ("Sources/ModelStoreConformance/WRITING-AN-ADAPTER.md", "WritingAnAdapter.md"),
    ]

    @Test(arguments: pointers)
    func guideBesideTheSuiteIsOnlyAPointerToItsArticle(pointer: String, article: String) throws {
        let text = try String(contentsOf: Self.root.appendingPathComponent(pointer), encoding: .utf8)
        #expect(text.contains("ModelStore.docc/\(article)"), "\(pointer) does not point to the article \(article)")
        #expect(text.split(separator: "\n").count < 10, "\(pointer) must point to \(article), not repeat it")
        let target = Self.root.appendingPathComponent("Sources/ModelStore/ModelStore.docc").appendingPathComponent(
            article)
        #expect(FileManager.default.fileExists(atPath: target.path), "\(pointer) points to a missing article")
    }

    @Test func articleDescribesEveryGroup() throws {
        let text = try String(contentsOf: Self.article, encoding: .utf8)
        for group in ConformanceGroup.allCases {
            #expect(
                text.contains("**\(group.rawValue)**"), "the article does not describe the group '\(group.rawValue)'")
        }
    }
}
