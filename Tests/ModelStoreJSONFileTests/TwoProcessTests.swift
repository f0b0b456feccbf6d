import Foundation
import ModelStore
import ModelStoreTestSupport
import Testing

@testable import ModelStoreJSONFile

/// Two processes on one file. The second process is this test binary run again, filtered to the
/// same test, with `MODELSTORE_JSONFILE_CHILD` saying which part to play. (This relies on the test
/// binary being an executable that takes Swift Testing's arguments, as `swift test` builds it on Linux.)
struct TwoProcessTests {
    static let roleVariable = "MODELSTORE_JSONFILE_CHILD"
    static let pathVariable = "MODELSTORE_JSONFILE_PATH"

    /// The role this process plays, if it is a child.
    static var childRole: String? { ProcessInfo.processInfo.environment[roleVariable] }
    static var childPath: URL {
        URL(fileURLWithPath: ProcessInfo.processInfo.environment[pathVariable] ?? "/nonexistent")
    }

    /// Runs this test binary again as the child, filtered to `test`, and returns once it exits.
    @discardableResult
    static func runChild(_ role: String, test: String, path: URL, wait: Bool = true) throws -> Process {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: CommandLine.arguments[0])
        process.arguments = ["--testing-library", "swift-testing", "--filter", "TwoProcessTests/\(test)"]
        var environment = ProcessInfo.processInfo.environment
        environment[roleVariable] = role
        environment[pathVariable] = path.path
        process.environment = environment
        let log = path.path + ".\(role).log"
        _ = FileManager.default.createFile(atPath: log, contents: nil)
        let output = try FileHandle(forWritingTo: URL(fileURLWithPath: log))
        process.standardOutput = output
        process.standardError = output
        try process.run()
        if wait { try finish(process, role: role, log: log) }
        return process
    }

    /// Waits for a child and expects it to have succeeded, showing its output if it didn't.
    static func finish(_ process: Process, role: String, log: String? = nil) throws {
        process.waitUntilExit()
        let output = log.flatMap { try? String(contentsOfFile: $0, encoding: .utf8) } ?? ""
        #expect(process.terminationStatus == 0, "the child '\(role)' failed:\n\(output)")
    }

    static func gadget(_ store: JSONFileStore, named name: String) throws -> DefaultSnapshot? {
        try Stores.all(store, "Gadget").first { $0["name"] == .string(name) }
    }

    @Test func anotherProcessesSaveIsReloadedAndTheSaveAppliedOnTop() throws {
        if let role = Self.childRole {
            // The child: change "shared" and add a gadget of its own.
            let store = try Stores.open(Self.childPath)
            var shared = try #require(try Self.gadget(store, named: "shared"))
            shared["int"] = .int(Int64(role == "first" ? 1 : 2))
            try Stores.save(
                store, inserting: [try Stores.new("Gadget", ["name": .string("from child \(role)")])],
                updating: [shared])
            return
        }
        let directory = try TemporaryDirectory()
        let store = try Stores.open(directory.file())
        try Stores.save(store, inserting: [try Stores.new("Gadget", ["name": .string("shared")])])
        try Self.runChild("first", test: "anotherProcessesSaveIsReloadedAndTheSaveAppliedOnTop", path: directory.file())

        // Fetches come from memory: the child's save is not visible yet.
        #expect(try Self.gadget(store, named: "from child first") == nil)
        // A save that touches nothing the child changed is applied on top of the child's file.
        try Stores.save(store, inserting: [try Stores.new("Gadget", ["name": .string("from parent")])])
        let merged = try Stores.open(directory.file())
        #expect(
            Set(try Stores.all(merged, "Gadget").compactMap { $0["name"] })
                == [.string("shared"), .string("from child first"), .string("from parent")])
        #expect(try Self.gadget(merged, named: "shared")?["int"] == .int(1))
        #expect(try Self.gadget(store, named: "from child first") != nil, "the saving store took in the child's data")

        // A save that changes what the child changed meanwhile is refused, and writes nothing.
        let stale = try #require(try Self.gadget(store, named: "shared"))
        try Self.runChild(
            "second", test: "anotherProcessesSaveIsReloadedAndTheSaveAppliedOnTop", path: directory.file())
        let childsFile = directory.file().text
        var update = stale
        update["int"] = .int(3)
        #expect {
            try Stores.save(store, updating: [update])
        } throws: { error in
            let error = try #require(error as? DataStoreError)
            return error.code == .conflict && error.message.contains("another process changed it")
        }
        #expect(directory.file().text == childsFile)
        // The store has read the child's version; saving on top of it works.
        var fresh = try #require(try Self.gadget(store, named: "shared"))
        #expect(fresh["int"] == .int(2))
        fresh["int"] = .int(3)
        try Stores.save(store, updating: [fresh])
        #expect(try Self.gadget(try Stores.open(directory.file()), named: "shared")?["int"] == .int(3))
    }

    @Test func concurrentWritersNeverLoseASave() throws {
        let count = 15
        if Self.childRole != nil {
            let store = try Stores.open(Self.childPath) { $0.lockTimeout = .seconds(120) }
            for index in 0..<count {
                try Stores.save(store, inserting: [try Stores.new("Gadget", ["name": .string("child \(index)")])])
            }
            return
        }
        let directory = try TemporaryDirectory()
        let store = try Stores.open(directory.file()) { $0.lockTimeout = .seconds(120) }
        let child = try Self.runChild(
            "writer", test: "concurrentWritersNeverLoseASave", path: directory.file(), wait: false)
        for index in 0..<count {
            try Stores.save(store, inserting: [try Stores.new("Gadget", ["name": .string("parent \(index)")])])
        }
        try Self.finish(child, role: "writer", log: directory.file().path + ".writer.log")
        let names = Set(try Stores.all(try Stores.open(directory.file()), "Gadget").compactMap { $0["name"] })
        #expect(names.count == 2 * count, "\(names.count) of \(2 * count) saves are in the file")
        for index in 0..<count {
            #expect(names.contains(.string("child \(index)")) && names.contains(.string("parent \(index)")))
        }
    }

    @Test func aWriterWaitsForTheLockAndGivesUpClearly() throws {
        if Self.childRole != nil {
            // Hold the store's lock until the parent says to let go.
            let paths = Paths(Self.childPath)
            let lock = try FileLock(path: paths.lock)
            try lock.withLock(timeout: .seconds(5), document: paths.document) {
                _ = FileManager.default.createFile(atPath: paths.document + ".held", contents: nil)
                for _ in 0..<6_000 where !FileManager.default.fileExists(atPath: paths.document + ".release") {
                    usleep(10_000)
                }
            }
            return
        }
        let directory = try TemporaryDirectory()
        let store = try Stores.open(directory.file()) { $0.lockTimeout = .milliseconds(100) }
        let child = try Self.runChild(
            "holder", test: "aWriterWaitsForTheLockAndGivesUpClearly", path: directory.file(), wait: false)
        for _ in 0..<6_000 where !FileManager.default.fileExists(atPath: directory.file("store.json.held").path) {
            usleep(10_000)
        }
        #expect {
            try Stores.save(store, inserting: [try Stores.new("Gadget", ["name": .string("blocked")])])
        } throws: { error in
            let error = try #require(error as? DataStoreError)
            return error.code == .locked && error.message.contains(directory.file().path)
        }
        _ = FileManager.default.createFile(atPath: directory.file("store.json.release").path, contents: nil)
        try Self.finish(child, role: "holder", log: directory.file().path + ".holder.log")
        try Stores.save(store, inserting: [try Stores.new("Gadget", ["name": .string("after")])])
        #expect(try Stores.all(try Stores.open(directory.file()), "Gadget").map { $0["name"] } == [.string("after")])
    }
}
