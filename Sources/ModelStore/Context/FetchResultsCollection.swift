import Foundation

/// The result of ``ModelContext/fetch(_:batchSize:)``: the matching models in the descriptor's
/// order, read from the store a batch at a time as you reach them, as SwiftData's
/// `FetchResultsCollection` is.
///
/// The fetch reads only the identifiers of the result. Reading an element loads the batch that
/// holds it, and the models of the batch read before it are released from the context when
/// nothing else refers to them: not your code, not another model's relationship, and not the
/// context's unsaved changes. So iterating a large result keeps about one batch of models in
/// memory, however long it is, and a model you keep stays registered, so changes to it are saved.
///
/// The result is the one the fetch saw. If another context or process deletes one of its
/// models before its batch is read, reading that element stops the program with a message
/// naming the model, as in SwiftData; when other writers may delete concurrently, use
/// ``ModelContext/fetch(_:)`` or ``ModelContext/enumerate(_:batchSize:allowEscapingMutations:block:)``.
public struct FetchResultsCollection<Model: PersistentModel>: RandomAccessCollection {
    /// Positions are offsets from 0.
    public typealias Index = Int

    private let batches: Batches

    init(context: ModelContext, identifiers: [PersistentIdentifier], batchSize: Int) {
        batches = Batches(context: context, identifiers: identifiers, batchSize: Swift.max(batchSize, 1))
    }

    /// How many models each read from the store loads.
    public var batchSize: Int { batches.batchSize }
    /// The position of the first model: 0.
    public var startIndex: Int { 0 }
    /// The number of models.
    public var endIndex: Int { batches.identifiers.count }

    /// The model at `position`, loading its batch if it is not loaded.
    public subscript(position: Int) -> Model { batches.model(at: position) }

    /// The identifiers of the models, in order, without loading any.
    public var identifiers: [PersistentIdentifier] { batches.identifiers }

    /// The loaded batch and the context it belongs to.
    private final class Batches {
        let context: ModelContext
        let identifiers: [PersistentIdentifier]
        let batchSize: Int
        /// Models registered before the fetch, which the collection never releases.
        let registeredBefore: Set<PersistentIdentifier>
        var loadedStart = -1
        var loaded: [Model] = []

        init(context: ModelContext, identifiers: [PersistentIdentifier], batchSize: Int) {
            self.context = context
            self.identifiers = identifiers
            self.batchSize = batchSize
            registeredBefore = Set(identifiers.filter { context.registry[$0] != nil })
        }

        func model(at position: Int) -> Model {
            precondition(
                identifiers.indices.contains(position), "index \(position) out of range 0..<\(identifiers.count)")
            let start = position - position % batchSize
            if start != loadedStart { load(from: start) }
            return loaded[position - start]
        }

        private func load(from start: Int) {
            let previous = loaded.map(\.persistentModelID).filter { !registeredBefore.contains($0) }
            loaded = []
            loadedStart = -1
            let ids = Array(identifiers[start..<Swift.min(start + batchSize, identifiers.count)])
            let models: [Model]
            do {
                models = try context.loadModels(ids, as: Model.self)
            } catch {
                preconditionFailure("fetch(_:batchSize:) could not read the batch at \(start): \(error)")
            }
            guard models.count == ids.count else {
                let found = Set(models.map(\.persistentModelID))
                let gone = ids.first { !found.contains($0) }.map { "\($0)" } ?? "a model"
                preconditionFailure(
                    "fetch(_:batchSize:): \(gone) was deleted after the fetch, before its batch was read; "
                        + "use fetch(_:) or enumerate(_:) when other contexts delete concurrently")
            }
            loaded = models
            loadedStart = start
            context.releaseUnreferenced(previous)
        }
    }
}

extension ModelContext {
    /// Forgets the registered models with these identifiers that have no unsaved changes and that
    /// nothing but the context refers to, so memory can be given back without detaching a model
    /// that code still holds (whose later changes would otherwise be lost).
    func releaseUnreferenced(_ ids: [PersistentIdentifier]) {
        for id in ids {
            // Let go of the registry's reference, keeping only a weak one: if the model outlives
            // that, something else holds it (a model with unsaved changes is held by the
            // context's lists of changes), and it goes back into the registry.
            weak var held: AnyObject?
            do {
                guard let model = registry.removeValue(forKey: id) else { continue }
                held = model
            }
            if let model = held as? any PersistentModel { registry[id] = model }
        }
    }

    /// The models that match a descriptor, in its order, read from the store `batchSize` at a
    /// time as the result is read: SwiftData's `fetch(_:batchSize:)`. See ``FetchResultsCollection``.
    public func fetch<T: PersistentModel>(
        _ descriptor: FetchDescriptor<T>, batchSize: Int
    ) throws -> FetchResultsCollection<T> {
        FetchResultsCollection(context: self, identifiers: try fetchIdentifiers(descriptor), batchSize: batchSize)
    }
}
