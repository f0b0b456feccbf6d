import Foundation
import ModelStore
import ModelStoreTestSupport

/// Records the history tokens of the last `didSave` a context posted, until released.
final class HistoryTokenRecorder {
    private let seen = LockedValue<[DefaultHistoryToken]>([])
    private var observer: (any NSObjectProtocol)?

    /// The tokens of the last save (empty before the first, or when it named none).
    var tokens: [DefaultHistoryToken] { seen.withLock { $0 } }

    /// Starts recording the saves of `context`.
    init(_ context: ModelContext) {
        observer = NotificationCenter.default.addObserver(
            forName: ModelContext.didSave, object: context, queue: nil
        ) { [seen] note in
            let tokens = note.userInfo?[ModelContext.NotificationKey.historyTokens.rawValue] as? [DefaultHistoryToken]
            seen.withLock { $0 = tokens ?? [] }
        }
    }

    deinit {
        if let observer { NotificationCenter.default.removeObserver(observer) }
    }
}
