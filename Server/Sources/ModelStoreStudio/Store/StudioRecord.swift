import ModelStore

/// The model type the studio's fetch requests name.
///
/// Every request the studio sends carries a ``StoreQuery`` naming its entity, so a store never
/// looks at this type: it exists because a fetch request is generic over a model type, and the
/// studio has none of the app's.
final class StudioRecord: PersistentModel {
    /// The framework's state (unused: the studio never materializes models).
    let persistentBackingData = BackingData()

    /// An empty stand-in.
    init() {}
}
