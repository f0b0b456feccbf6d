import Foundation

/// The fields of a form posted as `application/x-www-form-urlencoded`.
struct FormBody {
    /// The fields by name (the last value of a repeated name).
    let fields: [String: String]

    /// Parses a form body.
    init(_ text: String) {
        var fields: [String: String] = [:]
        for pair in text.split(separator: "&", omittingEmptySubsequences: true) {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            func decode(_ part: Substring) -> String {
                String(part).replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? String(part)
            }
            fields[decode(parts[0])] = parts.count > 1 ? decode(parts[1]) : ""
        }
        self.fields = fields
    }

    /// A field that must be present; throws ``StudioError/Kind/badRequest`` naming it otherwise.
    func required(_ name: String) throws -> String {
        guard let value = fields[name] else {
            throw StudioError(
                .badRequest, "the form has no field '\(name)'", remedy: "Submit the form from the studio's page")
        }
        return value
    }
}
