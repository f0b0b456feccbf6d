import Foundation

// Fetch, step 3: conditions and sorts the store could not run, on snapshots.
extension ModelContext {
    /// What the store could not run, and re-checks of what it ran inexactly, run on the snapshots
    /// before any model exists; then the window, when nothing later changes the result.
    @inline(__always)
    func snapshotStage<T: PersistentModel>(
        _ snapshots: [DefaultSnapshot], _ descriptor: FetchDescriptor<T>, plan: FetchPlan<T>
    ) throws -> [DefaultSnapshot] {
        var snapshots = try plan.refine(snapshots, schema: container.schema)
        if plan.windowStage == .snapshots {
            snapshots = SnapshotOrdering.window(
                snapshots, offset: descriptor.fetchOffset ?? 0, limit: descriptor.fetchLimit)
        }
        return snapshots
    }
}
