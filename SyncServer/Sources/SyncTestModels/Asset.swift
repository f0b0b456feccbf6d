import Foundation
import ModelStore
import ModelStoreSync

/// The root of a class hierarchy that belongs to users: every asset, of whatever class, has an owner.
public class Asset: PersistentModel {
    /// The subject of the user it belongs to.
    @Attribute public var owner: String = ""
    /// Its label, the same on every replica.
    @Attribute public var label: String = ""

    /// Required by `PersistentModel`.
    public let persistentBackingData = BackingData()
    /// An empty asset.
    public required init() {}
    /// An asset of `owner`, of whichever class this is.
    public convenience init(owner: String, label: String) {
        self.init()
        self.owner = owner
        self.label = label
    }
}

/// An asset with memory.
public final class Laptop: Asset {
    /// Its memory in gigabytes.
    @Attribute public var memory: Int = 8
}

/// An asset with a width.
public final class Desk: Asset {
    /// Its width in metres.
    @Attribute public var width: Double = 1.2
}

/// The root of a class hierarchy whose root class is shared by everyone: boards have no owner.
public class Board: PersistentModel {
    /// Its title, the same on every replica.
    @Attribute public var title: String = ""

    /// Required by `PersistentModel`.
    public let persistentBackingData = BackingData()
    /// An empty board.
    public required init() {}
}

/// A board that belongs to one user: only this subclass declares the owner.
public final class PrivateBoard: Board {
    /// The subject of the user it belongs to.
    @Attribute public var owner: String = ""
}

extension SyncTestSchema {
    /// The schema of the notes and the two hierarchies, sync entities included.
    public static let hierarchies = Schema([
        Note.self, Asset.self, Laptop.self, Desk.self, Board.self, PrivateBoard.self,
    ])
    .includingSyncMetadata()

    /// Every asset and board in `container` as `Class owner/label extra`, sorted.
    public static func hierarchyModels(in container: ModelContainer) throws -> [String] {
        let context = ModelContext(container)
        let assets = try context.fetch(FetchDescriptor<Asset>()).map { asset in
            switch asset {
            case let laptop as Laptop: "Laptop \(laptop.owner)/\(laptop.label) \(laptop.memory)"
            case let desk as Desk: "Desk \(desk.owner)/\(desk.label) \(desk.width)"
            default: "Asset \(asset.owner)/\(asset.label)"
            }
        }
        let boards = try context.fetch(FetchDescriptor<Board>()).map { board in
            (board as? PrivateBoard).map { "PrivateBoard \($0.owner)/\($0.title)" } ?? "Board \(board.title)"
        }
        return (assets + boards).sorted()
    }
}
