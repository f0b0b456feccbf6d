import Foundation
import ModelStore
import ModelStoreAdapters
import ModelStoreAppendLog
import ModelStoreJSONFile

/// A model with an attribute of most kinds, a composite, and relationships both ways: the schema
/// the fuzz targets decode with.
final class FuzzItem: PersistentModel {
    @Attribute(.unique) var name: String = ""
    @Attribute var count: Int = 0
    @Attribute var small: Int8 = 0
    @Attribute var big: UInt64 = 0
    @Attribute var ratio: Double = 0
    @Attribute var price: Decimal = 0
    @Attribute var when: Date = Date(timeIntervalSinceReferenceDate: 0)
    @Attribute var blob: Data = Data()
    @Attribute var id: UUID? = nil
    @Attribute var link: URL? = nil
    @Attribute var tags: [String] = []
    @Attribute var scores: [String: Double] = [:]
    @Attribute var shape: FuzzShape? = nil
    @Relationship(deleteRule: .cascade, inverse: \FuzzPart.item) var parts: [FuzzPart] = []

    let persistentBackingData = BackingData()
    init() {}
}

/// The other side of the relationship.
final class FuzzPart: PersistentModel {
    @Attribute var label: String = ""
    @Relationship var item: FuzzItem?

    let persistentBackingData = BackingData()
    init() {}
}

/// A composite value.
struct FuzzShape: Codable, Hashable, Sendable {
    var width: Double
    var label: String
    var at: Date
}

/// The fuzz targets, by name.
enum FuzzTarget: String, CaseIterable {
    /// The JSON scanner and the JSON store's document decoder.
    case json
    /// The append log's record decoder, segment scanner, checkpoint reader and manifest parser.
    case log
    /// Store URL parsing and the built-in schemes' configurations.
    case url
    /// The predicate translator and both evaluators (snapshots and SQL), fed generated predicate trees.
    case predicate

    static let schema = Schema(FuzzItem.self, FuzzPart.self)

    func run(_ bytes: [UInt8]) {
        switch self {
        case .json: JSONFileFuzzing.run(bytes, schema: Self.schema)
        case .log: AppendLogFuzzing.run(bytes, schema: Self.schema)
        case .url:
            let text = String(decoding: bytes, as: UTF8.self)
            let registry = StoreRegistry()
            registry.registerBuiltInSchemes()
            if let url = try? registry.url(text) {
                _ = url.description
                _ = try? registry.configuration(for: text)
            }
        case .predicate: PredicateFuzzing.run(bytes)
        }
    }
}

#if MODELSTORE_FUZZING
    /// The target `scripts/fuzz.sh` chose, from `MODELSTORE_FUZZ_TARGET`.
    private let selected =
        FuzzTarget(
            rawValue: ProcessInfo.processInfo.environment["MODELSTORE_FUZZ_TARGET"] ?? "json") ?? .json

    /// libFuzzer's driver, from `libclang_rt.fuzzer_no_main` (which `scripts/fuzz.sh` links).
    @_silgen_name("LLVMFuzzerRunDriver")
    private func runFuzzerDriver(
        _ argc: UnsafeMutablePointer<CInt>,
        _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>>,
        _ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt
    ) -> CInt

    /// With the fuzzer: hands the command line to libFuzzer, which calls the target per input.
    @main
    enum FuzzMain {
        static func main() {
            var argc = CommandLine.argc
            var argv = CommandLine.unsafeArgv
            exit(
                runFuzzerDriver(&argc, &argv) { data, size in
                    selected.run(data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? [])
                    return 0
                })
        }
    }
#else
    /// Without the fuzzer: `ModelStoreFuzz TARGET FILE...` runs each file through a target, to
    /// reproduce a finding or replay a corpus (the regression test does).
    @main
    enum FuzzReplay {
        static func main() {
            let arguments = Array(CommandLine.arguments.dropFirst())
            if arguments.first == "seed", arguments.count == 2 {
                do {
                    try FuzzSeeds.write(to: URL(fileURLWithPath: arguments[1]))
                    exit(0)
                } catch {
                    print("cannot write seeds: \(error)")
                    exit(1)
                }
            }
            guard let name = arguments.first, let target = FuzzTarget(rawValue: name) else {
                print("usage: ModelStoreFuzz json|log|url|predicate FILE... | ModelStoreFuzz seed DIR")
                exit(2)
            }
            for path in arguments.dropFirst() {
                guard let data = FileManager.default.contents(atPath: path) else {
                    print("cannot read '\(path)'")
                    exit(1)
                }
                target.run([UInt8](data))
            }
            print("\(name): \(arguments.count - 1) inputs, no crash")
        }
    }
#endif

/// The first inputs of each target: files the stores write, and URLs.
enum FuzzSeeds {
    /// Writes `json/`, `log/`, `url/` and `predicate/` seed files into `directory`.
    static func write(to directory: URL) throws {
        let work = FileManager.default.temporaryDirectory.appendingPathComponent("fuzz-seeds-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: work) }
        let json = work.appendingPathComponent("store.json")
        let log = work.appendingPathComponent("store-log")
        for configuration in [
            JSONFileStoreConfiguration(url: json) as any DataStoreConfiguration,
            AppendLogStoreConfiguration(directory: log, compaction: .manual),
        ] {
            let container = try ModelContainer(for: FuzzTarget.schema, configurations: [configuration])
            let context = ModelContext(container)
            let item = FuzzItem()
            item.name = "lamp"
            item.count = -3
            item.big = .max
            item.ratio = 0.1
            item.price = Decimal(string: "12.50")!
            item.blob = Data([0, 1, 2])
            item.id = UUID()
            item.link = URL(string: "https://example.com/a")
            item.tags = ["a", "$b"]
            item.scores = ["x": 1.5]
            item.shape = FuzzShape(width: 2, label: "box", at: Date(timeIntervalSinceReferenceDate: 5))
            let part = FuzzPart()
            part.label = "bulb"
            context.insert(item)
            context.insert(part)
            part.item = item
            try context.save()
            item.count = 4
            context.delete(part)
            try context.save()
            (container.stores.first as? AppendLogStore)?.close()
        }
        func put(_ target: String, _ name: String, _ bytes: [UInt8]) throws {
            let folder = directory.appendingPathComponent(target)
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            try Data(bytes).write(to: folder.appendingPathComponent(name))
        }
        try put("json", "document.json", [UInt8](try Data(contentsOf: json)))
        let segment = [UInt8](try Data(contentsOf: log.appendingPathComponent("segment-00000001.mslog")))
        try put("log", "segment", segment)
        try put("log", "manifest", [UInt8](try Data(contentsOf: log.appendingPathComponent("manifest"))))
        // The payload of each record after the segment header, as the record decoder reads it.
        var offset = 8
        var index = 0
        while offset + 12 <= segment.count {
            let length = Int(segment[offset]) | Int(segment[offset + 1]) << 8 | Int(segment[offset + 2]) << 16
            if index > 0 { try put("log", "record-\(index)", Array(segment[(offset + 12)..<(offset + 12 + length)])) }
            offset += 12 + length
            index += 1
        }
        for (index, url) in [
            "json:trips.json?backup=false", "log:/tmp/a%20b?durability=everySave&compaction=manual",
            "memory:", "memory:name", "json:", "log:dir?durability=sometimes",
        ].enumerated() {
            try put("url", "url-\(index)", Array(url.utf8))
        }
        // Predicates: every leaf kind once, then logic around leaves (kinds 200 and up, see
        // `FuzzPredicateShape.decode`).
        for kind in 0..<30 { try put("predicate", "leaf-\(kind)", [UInt8(kind), 1, 2, 201, 3]) }
        let logic: [[UInt8]] = [
            [200, 1, 0, 3, 9, 7], [201, 9, 3, 26, 5], [202, 203, 11, 8, 12, 9, 17, 1],
            [200, 201, 20, 3, 5, 1, 28, 2, 202, 6, 5],
        ]
        for (index, bytes) in logic.enumerated() {
            try put("predicate", "logic-\(index)", bytes)
        }
    }
}
