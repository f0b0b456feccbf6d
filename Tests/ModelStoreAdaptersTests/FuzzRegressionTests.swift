import Foundation
import ModelStoreTestSupport
import Testing

/// Replays the committed fuzzing corpora (`Tests/FuzzCorpus/<target>/`: the seeds and every input
/// the fuzzer found interesting or crashing) through the fuzz targets, built without the fuzzer.
struct FuzzRegressionTests {
    @Test(arguments: ["json", "log", "url", "predicate"])
    func committedInputsRunWithoutACrash(target: String) throws {
        let corpus = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("FuzzCorpus").appendingPathComponent(target)
        let files = try FileManager.default.contentsOfDirectory(atPath: corpus.path).sorted()
            .map { corpus.appendingPathComponent($0).path }
        #expect(!files.isEmpty)
        let output = try SampleProcess(named: "ModelStoreFuzz").run([target] + files, in: corpus)
        #expect(output.status == 0, "\(output)")
        #expect(output.standardOutput.contains("\(target): \(files.count) inputs, no crash"), "\(output)")
    }
}
