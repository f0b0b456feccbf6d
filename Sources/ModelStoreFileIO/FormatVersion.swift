import ModelStore

/// The one verdict, code and wording for a file whose format version a store cannot read, shared
/// by every file store so that each case reads the same whichever store meets it.
///
/// - newer than the newest readable: ``DataStoreError/Code/unsupportedFeature``; a newer ModelStore
///   wrote it: open it with that one;
/// - 0 or negative: ``DataStoreError/Code/corrupted``; no ModelStore writes it: the header is damaged;
/// - older than the oldest readable: ``DataStoreError/Code/unsupportedFeature``; an older ModelStore
///   wrote it: convert it with one that reads it.
///
/// ```swift
/// if let refusal = FormatVersion.refusal(found: version, readable: 1...1) {
///     throw DataStoreError(refusal.code, "cannot open '\(path)': \(refusal.reason)", remedy: refusal.remedy)
/// }
/// ```
public enum FormatVersion {
    /// Why a format version cannot be read, and what to do.
    public struct Refusal: Sendable, Hashable {
        /// The error code: ``DataStoreError/Code/unsupportedFeature`` for a version some other
        /// ModelStore reads, ``DataStoreError/Code/corrupted`` for one none writes.
        public let code: DataStoreError.Code
        /// What is wrong, as a clause: `it has format version 2, newer than …`.
        public let reason: String
        /// What to do; `nil` for damage, whose remedy is the store's (restore, repair).
        public let remedy: String?
    }

    /// The refusal for format version `found`, or `nil` if `readable` includes it.
    public static func refusal(found: Int64, readable: ClosedRange<Int>) -> Refusal? {
        if found >= Int64(readable.lowerBound) && found <= Int64(readable.upperBound) { return nil }
        let range =
            readable.count == 1
            ? "version \(readable.lowerBound)" : "versions \(readable.lowerBound) to \(readable.upperBound)"
        if found < 1 {
            return Refusal(
                code: .corrupted,
                reason: "it has format version \(found), which no version of ModelStore writes (versions start at "
                    + "1): its header is damaged",
                remedy: nil)
        }
        if found > Int64(readable.upperBound) {
            return Refusal(
                code: .unsupportedFeature,
                reason: "it has format version \(found), newer than this version of ModelStore reads (\(range)): a "
                    + "newer version of ModelStore wrote it",
                remedy: "Open it with the version of ModelStore that wrote it, or a later one")
        }
        return Refusal(
            code: .unsupportedFeature,
            reason: "it has format version \(found), older than this version of ModelStore reads (\(range))",
            remedy: "Open it with an older version of ModelStore and convert it ('modelstore convert')")
    }
}
