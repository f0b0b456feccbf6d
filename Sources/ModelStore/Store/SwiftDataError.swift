import Foundation

/// SwiftData's error names, so that a ported `catch SwiftDataError.unsupportedPredicate { … }`
/// compiles and catches what ModelStore throws in the same situation.
///
/// ModelStore throws ``DataStoreError``, whose ``DataStoreError/code`` is finer than SwiftData's
/// names. Each name here matches the codes of the situations SwiftData reports with it:
///
/// | SwiftData's name | the `DataStoreError` codes it catches |
/// | --- | --- |
/// | ``loadIssueModelContainer`` | `corrupted`, `locked`, `io`, `invalidSchema`, `invalidConfiguration` |
/// | ``unknownSchema``, ``unknownDataStoreSchema``, ``backwardMigration`` | `invalidSchema` |
/// | ``duplicateConfiguration``, ``configurationSchemaNotFoundInContainerSchema`` | `invalidConfiguration` |
/// | ``unsupportedPredicate``, ``unsupportedKeyPath``, ``unsupportedSortDescriptor`` | `invalidPredicate` |
/// | ``modelValidationFailure`` | `uniqueConstraintViolation`, `denyRuleViolation`, `relationshipCountViolation`, `invalidValue` |
/// | ``missingProperty`` | `notFound` |
/// | ``historyTokenExpired`` | `historyTokenExpired` |
///
/// The rest (``includePendingChangesWithBatchSize``, ``sortingPendingChangesWithIdentifiers``,
/// ``invalidTransactionFetchRequest``, ``configurationFileNameTooLong``,
/// ``configurationFileNameContainsInvalidCharacters``) name limits ModelStore does not have, so they
/// compile and catch nothing. To tell the situations apart, catch ``DataStoreError`` and read its code.
public struct SwiftDataError: Error, Hashable, Sendable, CustomStringConvertible {
    /// SwiftData's name for the error.
    public let name: String
    /// The ``DataStoreError`` codes this name catches.
    public let codes: Set<DataStoreError.Code>

    private init(_ name: String, _ codes: Set<DataStoreError.Code>) {
        self.name = name
        self.codes = codes
    }

    /// `SwiftDataError.<name>`.
    public var description: String { "SwiftDataError.\(name)" }

    /// Matches a thrown ``DataStoreError`` whose code is one of the name's codes (or this very value):
    /// `catch SwiftDataError.unsupportedPredicate { … }`.
    public static func ~= (pattern: SwiftDataError, error: any Error) -> Bool {
        if let error = error as? DataStoreError { return pattern.codes.contains(error.code) }
        return (error as? SwiftDataError) == pattern
    }

    /// A container could not open a store: damaged, locked, unreadable, or of a schema or
    /// configuration it cannot open.
    public static let loadIssueModelContainer = SwiftDataError(
        "loadIssueModelContainer", [.corrupted, .locked, .io, .invalidSchema, .invalidConfiguration])
    /// The store was written with a schema the container does not know.
    public static let unknownSchema = SwiftDataError("unknownSchema", [.invalidSchema])
    /// The store's schema is not the app's nor one of its migration plan's.
    public static let unknownDataStoreSchema = SwiftDataError("unknownDataStoreSchema", [.invalidSchema])
    /// The store was written with a newer schema version than the app's.
    public static let backwardMigration = SwiftDataError("backwardMigration", [.invalidSchema])
    /// Two configurations of a container name the same store, or are otherwise at odds.
    public static let duplicateConfiguration = SwiftDataError("duplicateConfiguration", [.invalidConfiguration])
    /// A configuration's schema names entities the container's schema does not have.
    public static let configurationSchemaNotFoundInContainerSchema = SwiftDataError(
        "configurationSchemaNotFoundInContainerSchema", [.invalidConfiguration])
    /// A predicate that cannot be run.
    public static let unsupportedPredicate = SwiftDataError("unsupportedPredicate", [.invalidPredicate])
    /// A key path that names no stored property.
    public static let unsupportedKeyPath = SwiftDataError("unsupportedKeyPath", [.invalidPredicate])
    /// A sort by something that is not a stored attribute.
    public static let unsupportedSortDescriptor = SwiftDataError("unsupportedSortDescriptor", [.invalidPredicate])
    /// A save that breaks a model's rules: a unique value taken, a deny rule, a relationship's count
    /// limits, or a value the store cannot keep.
    public static let modelValidationFailure = SwiftDataError(
        "modelValidationFailure",
        [.uniqueConstraintViolation, .denyRuleViolation, .relationshipCountViolation, .invalidValue])
    /// A property, model or entity that is not there.
    public static let missingProperty = SwiftDataError("missingProperty", [.notFound])
    /// A history token that points into deleted history.
    public static let historyTokenExpired = SwiftDataError("historyTokenExpired", [.historyTokenExpired])
    /// SwiftData cannot fetch in batches with pending changes included; ModelStore can, so this
    /// catches nothing.
    public static let includePendingChangesWithBatchSize = SwiftDataError("includePendingChangesWithBatchSize", [])
    /// SwiftData cannot sort pending changes when it fetches identifiers; ModelStore can, so this
    /// catches nothing.
    public static let sortingPendingChangesWithIdentifiers = SwiftDataError(
        "sortingPendingChangesWithIdentifiers", [])
    /// SwiftData's history fetch of an unsupported shape; ModelStore raises `invalidPredicate` or
    /// `unsupportedFeature` for a history descriptor it cannot run, so this catches nothing.
    public static let invalidTransactionFetchRequest = SwiftDataError("invalidTransactionFetchRequest", [])
    /// SwiftData's limit on a configuration's name as a file name; ModelStore has none, so this
    /// catches nothing.
    public static let configurationFileNameTooLong = SwiftDataError("configurationFileNameTooLong", [])
    /// SwiftData's rule on a configuration's name as a file name; ModelStore has none, so this
    /// catches nothing.
    public static let configurationFileNameContainsInvalidCharacters = SwiftDataError(
        "configurationFileNameContainsInvalidCharacters", [])
}
