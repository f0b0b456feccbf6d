import Foundation

/// An error from ModelStore or one of its adapters: a code you can catch by pattern, and a
/// message that says what failed, on what, and how to fix it.
///
/// Catch a kind of error by its code, in the style of SwiftData and GRDB:
///
/// ```swift
/// do {
///     try context.save()
/// } catch DataStoreError.uniqueConstraintViolation {
///     // another trip already has this name
/// }
/// ```
///
/// Descriptions never include record contents. The values involved in a unique-constraint
/// violation are available in ``conflictingValues`` for code that wants them.
public struct DataStoreError: Error, Sendable, CustomStringConvertible {
    /// What kind of failure this is.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        /// The code's name, as it appears in descriptions.
        public let name: String
        /// Creates a code; adapters may define their own for failures the built-in codes don't cover.
        public init(_ name: String) { self.name = name }
        /// The code's name.
        public var description: String { name }

        /// The adapter does not support what was asked.
        public static let unsupportedFeature = Code("unsupportedFeature")
        /// The adapter asks the context to filter in memory.
        public static let preferInMemoryFilter = Code("preferInMemoryFilter")
        /// The adapter asks the context to sort in memory.
        public static let preferInMemorySort = Code("preferInMemorySort")
        /// A predicate cannot be evaluated, or names a property that is not stored.
        public static let invalidPredicate = Code("invalidPredicate")
        /// A save would store two models with the same unique value.
        public static let uniqueConstraintViolation = Code("uniqueConstraintViolation")
        /// A delete is refused by a `.deny` delete rule.
        public static let denyRuleViolation = Code("denyRuleViolation")
        /// A relationship's count is outside its declared minimum and maximum.
        public static let relationshipCountViolation = Code("relationshipCountViolation")
        /// A model, identifier or file that was needed does not exist.
        public static let notFound = Code("notFound")
        /// Stored data is damaged or does not match the schema.
        public static let corrupted = Code("corrupted")
        /// Another process or store holds a lock that is needed.
        public static let locked = Code("locked")
        /// Another writer changed the store since it was loaded.
        public static let conflict = Code("conflict")
        /// Reading or writing the file system failed.
        public static let io = Code("io")
        /// A model's schema cannot be used as declared.
        public static let invalidSchema = Code("invalidSchema")
        /// A configuration or store URL is not valid.
        public static let invalidConfiguration = Code("invalidConfiguration")
        /// A stored value cannot be converted to the property's type.
        public static let invalidValue = Code("invalidValue")
        /// A history token points into history that was deleted: SwiftData's `historyTokenExpired`.
        public static let historyTokenExpired = Code("historyTokenExpired")
        /// A change was asked of a store opened read-only (`allowsSave: false`).
        public static let readOnly = Code("readOnly")
    }

    /// What kind of failure this is.
    public var code: Code
    /// What failed and on what, with names and values quoted in single quotes.
    public var message: String
    /// How to fix it, when there is something to do.
    public var remedy: String?
    /// The entity involved, if any.
    public var entityName: String?
    /// The properties involved, if any (for example the columns of a violated unique constraint).
    public var propertyNames: [String]
    /// The values of ``propertyNames`` that conflicted, for unique-constraint violations.
    /// Never part of ``description``.
    public var conflictingValues: [StoreValue]
    /// The error that caused this one, if any.
    public var underlyingError: (any Error & Sendable)?
    /// The source location that raised the error.
    public var location: String

    /// Creates an error.
    public init(
        _ code: Code,
        _ message: String,
        remedy: String? = nil,
        entityName: String? = nil,
        propertyNames: [String] = [],
        conflictingValues: [StoreValue] = [],
        underlyingError: (any Error & Sendable)? = nil,
        file: String = #fileID,
        line: Int = #line
    ) {
        self.code = code
        self.message = message
        self.remedy = remedy
        self.entityName = entityName
        self.propertyNames = propertyNames
        self.conflictingValues = conflictingValues
        self.underlyingError = underlyingError
        self.location = "\(file):\(line)"
    }

    /// `code: message. remedy (underlying error)`.
    public var description: String {
        var text = "\(code): \(message)"
        if let remedy { text += ". \(remedy)" }
        if let underlyingError { text += " (underlying error: \(underlyingError))" }
        return text
    }

    /// Matches an error by code: `catch DataStoreError.uniqueConstraintViolation { … }`.
    public static func ~= (pattern: DataStoreError, error: any Error) -> Bool {
        (error as? DataStoreError)?.code == pattern.code
    }

    /// SwiftData's error for an adapter that cannot do what was asked.
    public static let unsupportedFeature = DataStoreError(
        .unsupportedFeature, "the store does not support this feature")
    /// SwiftData's error by which an adapter asks the context to filter in memory.
    public static let preferInMemoryFilter = DataStoreError(
        .preferInMemoryFilter, "the store asks the context to filter in memory")
    /// SwiftData's error by which an adapter asks the context to sort in memory.
    public static let preferInMemorySort = DataStoreError(
        .preferInMemorySort, "the store asks the context to sort in memory")
    /// SwiftData's error for a predicate the store cannot use.
    public static let invalidPredicate = DataStoreError(.invalidPredicate, "the predicate cannot be evaluated")
    /// A pattern matching every unique-constraint violation.
    public static let uniqueConstraintViolation = DataStoreError(
        .uniqueConstraintViolation, "unique constraint violated")
    /// A save would store a second model with the same values of a unique attribute or compound
    /// constraint: the one error every store and the context raise for it.
    ///
    /// - Parameters:
    ///   - entityName: The entity whose constraint is violated.
    ///   - propertyNames: The constraint's properties, in order.
    ///   - conflictingValues: Their values (kept out of the description).
    ///   - file: The source file that raises the error.
    ///   - line: The line that raises it.
    public static func uniqueConstraintViolation(
        entityName: String, propertyNames: [String], conflictingValues: [StoreValue], file: String = #fileID,
        line: Int = #line
    ) -> DataStoreError {
        DataStoreError(
            .uniqueConstraintViolation,
            "another '\(entityName)' already has the same " + propertyNames.map { "'\($0)'" }.joined(separator: ", "),
            remedy: "Change the value, or fetch and update the existing model instead of inserting a new one",
            entityName: entityName, propertyNames: propertyNames, conflictingValues: conflictingValues,
            file: file, line: line)
    }
    /// A pattern matching every deny-rule violation.
    public static let denyRuleViolation = DataStoreError(.denyRuleViolation, "delete denied by a relationship rule")
    /// A pattern matching every relationship count violation.
    public static let relationshipCountViolation = DataStoreError(
        .relationshipCountViolation, "relationship count out of range")
    /// A pattern matching every not-found error.
    public static let notFound = DataStoreError(.notFound, "not found")
    /// A pattern matching every corruption error.
    public static let corrupted = DataStoreError(.corrupted, "stored data is corrupted")
    /// A pattern matching every lock error.
    public static let locked = DataStoreError(.locked, "the store is locked")
    /// A pattern matching every write conflict.
    public static let conflict = DataStoreError(.conflict, "the store was changed by another writer")
    /// The error for a save of models another context or process changed since they were read:
    /// names up to five of them with their differing attributes, and says how to go on.
    ///
    /// - Parameters:
    ///   - models: Each model with the names of its attributes that changed.
    ///   - entityName: The first model's entity.
    ///   - propertyNames: The first model's changed attributes.
    ///   - file: The source file that raises the error.
    ///   - line: The line that raises it.
    public static func conflict(
        _ models: [(id: PersistentIdentifier, attributes: [String])], entityName: String, propertyNames: [String],
        file: String = #fileID, line: Int = #line
    ) -> DataStoreError {
        let names = models.prefix(5).map { "\($0.id) ('\($0.attributes.joined(separator: "', '"))')" }
        return DataStoreError(
            .conflict,
            "\(models.count) model(s) changed by another context or process since this context read them: "
                + names.joined(separator: ", ") + (models.count > 5 ? ", …" : ""),
            remedy:
                "Fetch them again (or rollback()) and reapply the change, or set the context's mergePolicy to "
                + ".mergeByProperty, .storeTrumps or .objectTrumps",
            entityName: entityName, propertyNames: propertyNames, file: file, line: line)
    }
    /// A pattern matching every I/O error.
    public static let io = DataStoreError(.io, "input/output failed")
    /// A pattern matching every schema error.
    public static let invalidSchema = DataStoreError(.invalidSchema, "invalid schema")
    /// A pattern matching every configuration error.
    public static let invalidConfiguration = DataStoreError(.invalidConfiguration, "invalid configuration")
    /// A pattern matching every value conversion error.
    public static let invalidValue = DataStoreError(.invalidValue, "invalid value")
    /// A pattern matching every expired history token: `catch DataStoreError.historyTokenExpired { … }`.
    public static let historyTokenExpired = DataStoreError(
        .historyTokenExpired, "the history token points into deleted history")
    /// A pattern matching every change refused by a read-only store: `catch DataStoreError.readOnly { … }`.
    public static let readOnly = DataStoreError(.readOnly, "the store is read-only")

    /// The error for a change asked of a store whose configuration does not allow saves.
    ///
    /// - Parameters:
    ///   - store: The configuration's name or the store's location, as the message shows it.
    ///   - action: What was refused, for example `"a save"`.
    ///   - file: The source file that raises the error.
    ///   - line: The line that raises it.
    public static func readOnly(
        store: String, refusing action: String, file: String = #fileID, line: Int = #line
    ) -> DataStoreError {
        DataStoreError(
            .readOnly, "\(action) cannot be stored in '\(store)', which was opened read-only (allowsSave: false)",
            remedy:
                "Open the store with a configuration that allows saves, or discard the changes with rollback()",
            file: file, line: line)
    }

    /// A value conversion error with a message.
    public static func invalidValue(_ message: String, file: String = #fileID, line: Int = #line) -> DataStoreError {
        DataStoreError(.invalidValue, message, file: file, line: line)
    }

    /// A schema error naming what is wrong and how to fix it.
    public static func invalidSchema(
        _ message: String, remedy: String, entityName: String? = nil, file: String = #fileID, line: Int = #line
    ) -> DataStoreError {
        DataStoreError(.invalidSchema, message, remedy: remedy, entityName: entityName, file: file, line: line)
    }
}
