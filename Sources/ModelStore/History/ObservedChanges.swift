import Foundation
import Observation

/// A container's committed changes as an `@Observable` value on the main actor: what an app's
/// interface reads to learn that the store changed, where ``ModelContainer/changes`` serves a task.
///
/// ```swift
/// let tripChanges = ObservedChanges(of: container, for: [Trip.self])
/// // A SwiftUI view that reads `tripChanges.count` (or `latest`) redraws after each save of a trip.
/// ```
///
/// It counts the same changes ``ModelContainer/changes`` delivers: saves and batch operations of any
/// context of the container, erases, and (while ``ModelContainer/watchExternalChanges(every:)``
/// runs) other processes' transactions. Changes published between two turns of the main actor
/// arrive together, as one observable update: ``count`` grows by their number and ``latest`` is the
/// last of them. Keep a reference to it as long as you want it to update.
@MainActor @Observable public final class ObservedChanges {
    /// The newest change this object took in, or `nil` before the first.
    public private(set) var latest: ModelContainerChange?
    /// How many changes this object took in since it was made.
    public private(set) var count = 0
    /// The entities whose changes count; empty means every entity.
    public let entityNames: Set<String>

    @ObservationIgnored private let hub: ChangeHub
    @ObservationIgnored private let pending = LockedValue<[ModelContainerChange]>([])
    @ObservationIgnored nonisolated(unsafe) private var observation: UUID?

    /// Observes the changes to `container`'s stores from now on: all of them, or only those that
    /// insert, update or delete models of `types` (an erase counts for every type).
    public init(of container: ModelContainer, for types: [any PersistentModel.Type] = []) {
        let names = Set(types.map { Schema.entityName(for: $0) })
        entityNames = names
        hub = container.changeHub
        let pending = pending
        // Called on the publishing thread: the first change of a burst schedules one update.
        observation = hub.observe { [weak self] change in
            guard names.isEmpty || change.touches(anyOf: names) else { return }
            let isFirst = pending.withLock { pending in
                pending.append(change)
                return pending.count == 1
            }
            if isFirst { Task { @MainActor in self?.takePendingChanges() } }
        }
    }

    deinit {
        // Safety: `observation` is written once, in init, before any other access.
        if let observation { hub.unobserve(observation) }
    }

    /// Takes in the changes published since the last update now, instead of on the main actor's
    /// next turn; does nothing when there are none.
    public func takePendingChanges() {
        let changes = pending.withLock { pending in
            defer { pending.removeAll() }
            return pending
        }
        guard let last = changes.last else { return }
        count += changes.count
        latest = last
    }
}
