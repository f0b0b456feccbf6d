import Foundation
import ModelStore
import ModelStoreAppendLog
import ModelStoreTestSupport
import Testing

struct AppendLogLockTests {
    @Test func aSecondOpenInTheSameProcessFailsNamingTheStoreAndTheProcess() throws {
        let directory = try TemporaryDirectory()
        let store = try openStore(directory.store)
        do {
            _ = try openStore(directory.store)
            Issue.record("a second writer opened the store")
        } catch let error as DataStoreError {
            #expect(error.code == .locked)
            #expect(error.message.contains(directory.store.standardizedFileURL.path))
            #expect(error.message.contains("pid \(ProcessInfo.processInfo.processIdentifier)"))
            #expect(error.remedy?.contains("close") == true)
        }
        // Through a container too.
        expectError(.locked) {
            try ModelContainer(for: Note.self, Folder.self, configurations: .appendLog(at: directory.store))
        }
        store.close()
        let again = try openStore(directory.store)
        #expect(again.identifier == store.identifier)
    }

    @Test func releasingTheStoreReleasesTheLock() throws {
        let directory = try TemporaryDirectory()
        do {
            let container = try ModelContainer(
                for: Note.self, Folder.self, configurations: .appendLog(at: directory.store))
            _ = container
        }
        let store = try openStore(directory.store)
        #expect(try contents(of: store).isEmpty)
    }

    @Test func anotherProcessHoldingTheLockIsNamedInTheError() throws {
        let flock = URL(fileURLWithPath: "/usr/bin/flock")
        try #require(FileManager.default.isExecutableFile(atPath: flock.path), "this test needs util-linux's flock")
        let directory = try TemporaryDirectory()
        try openStore(directory.store).close()
        let lockFile = file(directory.store, "lock")
        let childFile = directory.file("child.pid")
        // flock holds the lock (not passing it to its child, -o); the child records flock's pid as a store would.
        let holder = Process()
        holder.executableURL = flock
        holder.arguments = [
            "-o", lockFile.path, "/bin/sh", "-c",
            "echo $$ > '\(childFile.path)'; printf 'pid %s\\n' $PPID > '\(lockFile.path)'; exec sleep 60",
        ]
        try holder.run()
        defer {
            // End both processes this test started, by their ids: flock, then its child.
            kill(holder.processIdentifier, SIGKILL)
            if let child = (try? String(contentsOf: childFile, encoding: .utf8)).flatMap({
                Int32($0.trimmingCharacters(in: .whitespacesAndNewlines))
            }) {
                kill(child, SIGKILL)
            }
            holder.waitUntilExit()
        }
        var failure: DataStoreError?
        let deadline = Date().addingTimeInterval(30)
        while Date() < deadline {
            do {
                try openStore(directory.store).close()
            } catch let error as DataStoreError {
                failure = error
                if error.message.contains("process \(holder.processIdentifier)") { break }
            }
            usleep(10_000)
        }
        let error = try #require(failure)
        #expect(error.code == .locked)
        #expect(error.message.contains("process \(holder.processIdentifier)"), "\(error)")
        #expect(error.message.contains(directory.store.standardizedFileURL.path))
        // Repair refuses an open store too.
        expectError(.locked) { try AppendLogStore.repair(at: directory.store) }
    }
}
