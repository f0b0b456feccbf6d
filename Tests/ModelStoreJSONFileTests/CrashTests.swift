import Foundation
import ModelStore
import ModelStoreTestSupport
import Testing

@testable import ModelStoreJSONFile

/// A save stopped after each of its steps: by a crash (nothing cleaned up, the store abandoned),
/// or by a failure (the save throws). Reopening always finds the old file or the new one, complete.
struct CrashTests {
    /// A store holding two gadgets with external photos: the "old" state.
    static func seeded(_ directory: TemporaryDirectory) throws -> JSONFileStore {
        let store = try Stores.open(directory.file())
        try Stores.save(
            store,
            inserting: [
                try Stores.new(
                    "Gadget", ["name": .string("kept"), "int": .int(1), "photo": .data(Data("old photo".utf8))]),
                try Stores.new("Gadget", ["name": .string("removed"), "int": .int(2)]),
            ])
        return store
    }

    /// The "new" state's save: an update (with a new photo), a delete and an insert.
    static func saveChanges(_ store: JSONFileStore) throws {
        var gadgets = try Stores.all(store, "Gadget")
        gadgets[0]["int"] = .int(10)
        gadgets[0]["photo"] = .data(Data("new photo".utf8))
        try Stores.save(
            store,
            inserting: [
                try Stores.new("Gadget", ["name": .string("added"), "photo": .data(Data("added photo".utf8))])
            ],
            updating: [gadgets[0]], deleting: [gadgets[1]])
    }

    /// The names, numbers and photos of the gadgets in a freshly opened store.
    static func contents(_ directory: TemporaryDirectory) throws -> [String: (StoreValue, StoreValue)] {
        let store = try Stores.open(directory.file())
        var contents: [String: (StoreValue, StoreValue)] = [:]
        for gadget in try Stores.all(store, "Gadget") {
            guard case .string(let name)? = gadget["name"] else { continue }
            contents[name] = (gadget["int"]!, gadget["photo"]!)
        }
        return contents
    }

    static func isOld(_ contents: [String: (StoreValue, StoreValue)]) -> Bool {
        contents.count == 2 && contents["kept"]?.0 == .int(1) && contents["kept"]?.1 == .data(Data("old photo".utf8))
            && contents["removed"]?.0 == .int(2)
    }

    static func isNew(_ contents: [String: (StoreValue, StoreValue)]) -> Bool {
        contents.count == 2 && contents["kept"]?.0 == .int(10) && contents["kept"]?.1 == .data(Data("new photo".utf8))
            && contents["added"]?.1 == .data(Data("added photo".utf8))
    }

    static func stop(_ store: JSONFileStore, after target: SaveStep, with error: any Error) {
        store.saveStepHook.withLock { hook in
            hook = { step in if step == target { throw error } }
        }
    }

    static let committedSteps: Set<SaveStep> = [.renamedDocument, .syncedDirectory, .removedUnreferencedFiles]

    @Test(arguments: SaveStep.allCases)
    func aCrashLeavesTheOldFileOrTheNewOne(after step: SaveStep) throws {
        let directory = try TemporaryDirectory()
        let store = try Self.seeded(directory)
        Self.stop(store, after: step, with: SimulatedCrash())
        #expect(throws: SimulatedCrash.self) { try Self.saveChanges(store) }

        let contents = try Self.contents(directory)
        if Self.committedSteps.contains(step) {
            #expect(Self.isNew(contents), "after a crash at '\(step)': \(contents)")
        } else {
            #expect(Self.isOld(contents), "after a crash at '\(step)': \(contents)")
        }
        // Whatever the crash left behind does not get in the way of the next saves.
        let reopened = try Stores.open(directory.file())
        try Stores.save(
            reopened,
            inserting: [try Stores.new("Gadget", ["name": .string("later"), "photo": .data(Data("later".utf8))])])
        try Stores.save(reopened, inserting: [try Stores.new("Gadget", ["name": .string("later still")])])
        let final = try Self.contents(directory)
        #expect(final["later"]?.1 == .data(Data("later".utf8)))
        #expect(!FileManager.default.fileExists(atPath: directory.file("store.json.tmp").path))
        let external = directory.file("store.json.external").path
        let files = try FileManager.default.contentsOfDirectory(atPath: external)
        #expect(files.allSatisfy { !$0.hasSuffix(".tmp") }, "\(files)")
    }

    struct InjectedFailure: Error {}

    @Test(arguments: SaveStep.allCases)
    func aFailedSaveLeavesEverythingAsItWas(after step: SaveStep) throws {
        let directory = try TemporaryDirectory()
        let store = try Self.seeded(directory)
        let before = try Data(contentsOf: directory.file())
        Self.stop(store, after: step, with: InjectedFailure())
        if Self.committedSteps.contains(step) {
            // Past the rename the save has happened; what follows cannot undo it.
            try Self.saveChanges(store)
            #expect(Self.isNew(try Self.contents(directory)))
            #expect(try Stores.all(store, "Gadget").count == 2)
            return
        }
        #expect(throws: InjectedFailure.self) { try Self.saveChanges(store) }
        #expect(try Data(contentsOf: directory.file()) == before)
        #expect(!FileManager.default.fileExists(atPath: directory.file("store.json.tmp").path))
        let names = try Stores.all(store, "Gadget").compactMap { $0["name"] }
        #expect(names == [.string("kept"), .string("removed")], "the store's memory changed")
        // The store carries on.
        store.saveStepHook.withLock { $0 = nil }
        try Self.saveChanges(store)
        #expect(Self.isNew(try Self.contents(directory)))
    }

    @Test func theBackupIsTheFileBeforeTheLastSave() throws {
        let directory = try TemporaryDirectory()
        let store = try Self.seeded(directory)
        let old = try Data(contentsOf: directory.file())
        try Self.saveChanges(store)
        #expect(try Data(contentsOf: directory.file("store.json.backup")) == old)
        // The backup opens, with its external files still there.
        try FileManager.default.removeItem(at: directory.file())
        try FileManager.default.copyItem(at: directory.file("store.json.backup"), to: directory.file())
        #expect(Self.isOld(try Self.contents(directory)))
    }
}
