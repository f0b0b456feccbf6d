import Synchronization

extension PersistentIdentifier {
    /// The store and entity an identifier belongs to, kept once and shared by every identifier of
    /// them: copying an identifier copies no string, and comparing two compares one pointer.
    ///
    /// Making a scope looks its pair of names up in a table of the process, which keeps every pair
    /// it has seen for the life of the process (a program has as many pairs as it has entities in
    /// the stores it opened, and temporary identifiers one per entity). A store that mints many
    /// identifiers of one entity makes the scope once and calls its `identifier(_:)` per key;
    /// `PersistentIdentifier.identifier(for:entityName:primaryKey:)` looks the scope up each time,
    /// which costs little only while the same few pairs come back.
    ///
    /// Two scopes are equal exactly when their store identifiers and entity names are.
    ///
    /// Because pairs are never freed, a process that decodes identifiers from untrusted input keeps
    /// every distinct pair it is sent (about a hundred bytes each, plus the names). A server that
    /// takes identifiers from clients should read the store identifier and entity name into its own
    /// type first, and make a `PersistentIdentifier` only for the stores and entities it serves.
    public struct Scope: Hashable, Sendable, CustomStringConvertible {
        @usableFromInline let names: Unmanaged<Names>

        /// The scope of the identifiers of `entityName` minted by the store `storeIdentifier`, or of
        /// temporary identifiers of `entityName` when `storeIdentifier` is `nil`.
        public init(storeIdentifier: String?, entityName: String) {
            let slot = (entityName.utf8.count &+ 3 &* Int(entityName.utf8.first ?? 0)) & (Self.recent.count - 1)
            let last = Self.recent[slot].load(ordering: .acquiring)
            if let pointer = UnsafeRawPointer(bitPattern: last) {
                let names = Unmanaged<Names>.fromOpaque(pointer)
                if names._withUnsafeGuaranteedRef({
                    $0.entityName == entityName && $0.storeIdentifier == storeIdentifier
                }) {
                    self.names = names
                    return
                }
            }
            names = Self.table.withLock { table in
                let key = Key(storeIdentifier: storeIdentifier, entityName: entityName)
                if let names = table[key] { return names }
                // Retained once and never released: the table keeps every pair for the process's life.
                let names = Unmanaged.passRetained(Names(storeIdentifier: storeIdentifier, entityName: entityName))
                table[key] = names
                return names
            }
            Self.recent[slot].store(UInt(bitPattern: names.toOpaque()), ordering: .releasing)
        }

        /// The ``DataStore/identifier`` of the store, or `nil` for temporary identifiers.
        @inlinable public var storeIdentifier: String? { names._withUnsafeGuaranteedRef { $0.storeIdentifier } }
        /// The name of the entity.
        @inlinable public var entityName: String { names._withUnsafeGuaranteedRef { $0.entityName } }
        /// Whether this is the scope of temporary identifiers (no store has minted them yet).
        @inlinable public var isTemporary: Bool { names._withUnsafeGuaranteedRef { $0.storeIdentifier == nil } }

        /// The identifier of the model with the integer key `key` in this scope.
        @inlinable
        public func identifier(_ key: Int64) -> PersistentIdentifier {
            PersistentIdentifier(scope: self, primaryKey: .int(key))
        }

        /// The identifier of the model with the string key `key` in this scope.
        @inlinable
        public func identifier(_ key: String) -> PersistentIdentifier {
            PersistentIdentifier(scope: self, primaryKey: .string(key))
        }

        /// Whether both are the scope of the same store and entity (one pointer comparison: the
        /// table makes one scope per pair).
        @inlinable
        public static func == (lhs: Self, rhs: Self) -> Bool {
            lhs.names.toOpaque() == rhs.names.toOpaque()
        }

        /// Hashes the shared object's address, which stands for the pair within this process.
        @inlinable
        public func hash(into hasher: inout Hasher) {
            hasher.combine(names.toOpaque())
        }

        /// `Entity(store)`, or `Entity(temporary)` for temporary identifiers.
        public var description: String {
            "\(entityName)(\(storeIdentifier ?? "temporary"))"
        }

        /// The pair of names a scope stands for; one object per pair, never freed.
        @usableFromInline
        final class Names: Sendable {
            @usableFromInline let storeIdentifier: String?
            @usableFromInline let entityName: String

            init(storeIdentifier: String?, entityName: String) {
                self.storeIdentifier = storeIdentifier
                self.entityName = entityName
            }
        }

        /// A pair of names as the table's key.
        private struct Key: Hashable, Sendable {
            let storeIdentifier: String?
            let entityName: String
        }

        /// Every pair seen, with its object (behind ModelStore's one lock type, which the thread
        /// sanitizer can follow).
        private static let table = LockedValue<[Key: Unmanaged<Names>]>([:])
        /// The addresses of the objects made or found last, one slot per few entity names (by their
        /// length and first byte): a store minting identifiers of a few entities finds them here
        /// without taking the lock or hashing the names. Objects are never freed, so a slot read
        /// while another thread replaces it still points at a live object.
        private static let recent: InlineArray<8, Atomic<UInt>> = InlineArray { _ in Atomic(0) }
    }
}
