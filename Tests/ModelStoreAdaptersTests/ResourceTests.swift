import Foundation
import ModelStore
import ModelStoreAdapters
import ModelStoreTestSupport
import Testing

/// Every durable store when the machine runs short: a disk that fills up, a folder made read-only under
/// the store, a file replaced under an open store, and too few file descriptors. Each gives a typed `DataStoreError` naming the
/// file, loses nothing a save acknowledged, and the store opens again afterwards with exactly what
/// was saved. The disks are small tmpfs mounts; where mounting is refused those tests skip, saying why.
struct ResourceTests {
    /// A durable store, by the store URL that opens it in `folder`.
    struct Store: CustomTestStringConvertible, Sendable {
        var scheme: String
        var query: String = ""
        var fileName: String
        var testDescription: String { scheme + query }

        func configuration(in folder: URL) throws -> any DataStoreConfiguration {
            let registry = StoreRegistry()
            registry.registerBuiltInSchemes()
            return try registry.configuration(
                for: "\(scheme):\(folder.appendingPathComponent(fileName).path)\(query)")
        }
    }

    static let stores = [
        Store(scheme: "json", fileName: "store.json"),
        Store(scheme: "log", query: "?durability=everySave", fileName: "store-log"),
        Store(scheme: "log", query: "?durability=none", fileName: "store-log"),
        Store(scheme: "sqlite", fileName: "store.sqlite"),
    ]

    @Test(
        .enabled(if: TemporaryMount.refusal == nil, "\(TemporaryMount.refusal ?? "")"),
        arguments: stores)
    func aFullDiskRefusesTheSaveAndLosesNothing(store: Store) throws {
        let disk = try TemporaryMount(kibibytes: 384)
        let configuration = try store.configuration(in: disk.url)
        var acknowledged = 0
        var failure: (any Error)?
        try ToolLibrary.withContext(configuration) { context in
            // Books of 4 KiB each until the disk is full.
            for index in 0..<400 {
                context.insert(Self.book(index))
                do {
                    try context.save()
                    acknowledged += 1
                } catch {
                    failure = error
                    break
                }
            }
        }
        let error = try #require(
            failure as? DataStoreError, "no typed error on a full disk: \(String(describing: failure))")
        #expect(error.code == .io, "\(error)")
        #expect(error.message.contains(store.fileName), "the error names no file: \(error)")
        #expect(acknowledged > 3, "the disk filled before the store could save: \(acknowledged)")
        // Opens again on the full disk with every acknowledged save, then saves once there is room.
        #expect(try Self.titles(configuration).count == acknowledged)
        try disk.remount(readOnly: false, kibibytes: 4_096)
        try ToolLibrary.withContext(configuration) { context in
            context.insert(Self.book(9_999))
            try context.save()
        }
        #expect(try Self.titles(configuration).count == acknowledged + 1)
    }

    @Test(
        .enabled(if: TemporaryMount.refusal == nil, "\(TemporaryMount.refusal ?? "")"),
        arguments: stores)
    func aReadOnlyFolderRefusesWritesAndLosesNothing(store: Store) throws {
        let disk = try TemporaryMount(kibibytes: 4_096)
        let configuration = try store.configuration(in: disk.url)
        try ToolLibrary.withContext(configuration) { context in
            for index in 0..<3 { context.insert(Self.book(index)) }
            try context.save()
        }
        try disk.remount(readOnly: true)
        // Opening may be refused (a store that must write to open), else the save is.
        var failure: (any Error)?
        do {
            try ToolLibrary.withContext(configuration) { context in
                #expect(try context.fetchCount(FetchDescriptor<ToolBook>()) == 3)
                context.insert(Self.book(3))
                try context.save()
            }
        } catch {
            failure = error
        }
        let error = try #require(
            failure as? DataStoreError,
            "no typed error on a read-only disk: \(String(describing: failure))")
        #expect([.io, .locked].contains(error.code), "\(error)")
        #expect(error.message.contains(store.fileName), "the error names no file: \(error)")
        try disk.remount(readOnly: false)
        #expect(try Self.titles(configuration) == (0..<3).map(Self.title))
    }

    @Test(arguments: stores)
    func aFileReplacedUnderAnOpenStoreLosesNoSave(store: Store) throws {
        let directory = try TemporaryDirectory()
        let configuration = try store.configuration(in: directory.url)
        var acknowledged: [String] = []
        let container = try ToolLibrary.open(configuration)
        do {
            defer { ToolLibrary.close(container) }
            let context = ModelContext(container)
            for index in 0..<3 {
                context.insert(Self.book(index))
                try context.save()
                acknowledged.append(Self.title(index))
            }
            // As an editor, a sync tool or a restore does: a copy of each file renamed over it.
            for file in try Self.regularFiles(in: directory.url)
            where !file.lastPathComponent.hasSuffix("lock") {
                let copy = file.appendingPathExtension("copy")
                try FileManager.default.copyItem(at: file, to: copy)
                #expect(rename(copy.path, file.path) == 0)
            }
            // Each later save is kept or refused with an error that names the file; never acknowledged and lost.
            for index in 3..<6 {
                context.insert(Self.book(index))
                do {
                    try context.save()
                    acknowledged.append(Self.title(index))
                } catch let error as DataStoreError {
                    #expect(error.message.contains(store.fileName), "the error names no file: \(error)")
                    break
                }
            }
        }
        #expect(try Self.titles(configuration) == acknowledged.sorted())
    }

    /// The stores the open-files test runs: one of each kind.
    static let openFileStores = [stores[0], stores[1], stores[3]]

    /// Too many open files: `modelstore-crash write` (which saves transactions and acknowledges each)
    /// runs under `ulimit -n N` for N from 4 up, until a run saves for a second and is killed. Every run
    /// that stops on its own must stop with a typed `DataStoreError` naming the store's file and
    /// `errno` 24 (or with the writer's own acknowledgement file unopened); after each run, with the
    /// normal limit, the store opens again with every acknowledged transaction and nothing partial
    /// (`modelstore-crash check`).
    @Test(arguments: openFileStores)
    func tooManyOpenFilesGiveATypedErrorAndLoseNothing(store: Store) throws {
        let crash = try SampleProcess(named: "ModelStoreCrashTest").executable.path
        let directory = try TemporaryDirectory()
        let path = directory.url.appendingPathComponent(store.fileName).path
        let url = "\(store.scheme):\(path)\(store.query)"
        let acknowledgements = directory.url.appendingPathComponent("acknowledged").path
        var refusals = 0
        var ran = false
        for limit in 4...40 where !ran {
            let writer = try Self.shell(
                "ulimit -n \(limit) && exec timeout -s KILL 1 \"$0\" write \"$1\" \"$2\"", crash, url, acknowledgements)
            let place = "ulimit -n \(limit): \(writer)"
            // `timeout` sends SIGKILL to its process group, itself included: a status of 9 (the signal) or 137.
            if writer.status == 9 || writer.status == 137 {
                ran = true
            } else {
                #expect(writer.status == 1, "\(place)")
                let storeError =
                    writer.standardError.contains("errno 24") && writer.standardError.contains(path)
                    && writer.standardError.contains("ulimit -n")
                let ownFile = writer.standardError.contains("cannot open '\(acknowledgements)'")
                #expect(storeError || ownFile, "no typed error naming the file and the cause: \(place)")
                if storeError { refusals += 1 }
            }
            let stopped = writer.standardError.split(separator: "\n").first.map { String($0.prefix(300)) } ?? ""
            print("open files: \(store.testDescription): ulimit -n \(limit): \(ran ? "ran" : "stopped: \(stopped)")")
            let check = try Self.shell("exec \"$0\" check \"$1\" \"$2\"", crash, url, acknowledgements)
            #expect(
                check.status == 0 && check.standardOutput.contains(" lost 0 partial 0"),
                "after \(place)\nthe check: \(check)")
        }
        #expect(ran, "the writer never ran, up to 40 open files")
        #expect(refusals > 0, "no run was refused for want of open files")
        let acknowledged = try String(contentsOfFile: acknowledgements, encoding: .utf8).split(separator: "\n")
        #expect((Int(acknowledged.last ?? "") ?? 0) > 0, "nothing was acknowledged")
    }

    /// Runs a `bash` script with arguments (`$0`, `$1`, …) and captures what it prints.
    static func shell(_ script: String, _ arguments: String...) throws -> SampleProcess.Output {
        try SampleProcess(executable: URL(fileURLWithPath: "/bin/bash"))
            .run(["-c", script] + arguments, in: URL(fileURLWithPath: NSTemporaryDirectory()))
    }

    static func title(_ index: Int) -> String { String(format: "book %04d", index) }

    /// A book of about 4 KiB.
    static func book(_ index: Int) -> ToolBook {
        let book = ToolBook()
        book.title = title(index)
        book.pages = index
        book.subtitle = String(repeating: "\(index % 10)", count: 4_096)
        return book
    }

    /// The titles a fresh open finds.
    static func titles(_ configuration: any DataStoreConfiguration) throws -> [String] {
        try ToolLibrary.withContext(configuration) { context in
            try context.fetch(FetchDescriptor<ToolBook>(sortBy: [SortDescriptor(\.title)])).map(\.title)
        }
    }

    static func regularFiles(in directory: URL) throws -> [URL] {
        try CorruptionTests.files(in: directory).map { directory.appendingPathComponent($0) }
    }
}
