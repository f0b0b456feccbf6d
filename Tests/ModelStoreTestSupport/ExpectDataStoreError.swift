import ModelStore
import Testing

/// Records an issue unless `body` throws a ``DataStoreError`` with `code`; returns the error, so
/// the test can check its message too.
///
/// `DataStoreError` is matched by its code with `~=` (as `catch DataStoreError.notFound` does); it
/// is not `Equatable`, because two errors with one code but different messages are not the same
/// error.
@discardableResult
public func expectError<Result>(
    _ code: DataStoreError.Code, _ comment: Comment? = nil, sourceLocation: SourceLocation = #_sourceLocation,
    performing body: () throws -> Result
) -> DataStoreError? {
    let error = #expect(throws: DataStoreError.self, comment, sourceLocation: sourceLocation) { _ = try body() }
    if let error { #expect(error.code == code, "\(error)", sourceLocation: sourceLocation) }
    return error
}
