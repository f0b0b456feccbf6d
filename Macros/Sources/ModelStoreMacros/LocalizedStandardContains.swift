import Foundation

extension PredicateExpressions {
    /// `localizedStandardContains` in a `#Predicate`, which Foundation on Apple platforms has and
    /// Foundation on Linux lacks: whether the root string contains the other, ignoring case and
    /// diacritics, as the current locale compares them.
    ///
    /// ModelStore's stores do not translate it, so a predicate that uses it is evaluated in
    /// memory, over the models the rest of the predicate selects (see the context's explain).
    /// For a search that runs in the store, keep a folded copy of the text (`foldedForSearch`)
    /// and test it with `contains`.
    public struct StringLocalizedStandardContains<Root: PredicateExpression, Other: PredicateExpression>:
        PredicateExpression
    where Root.Output: StringProtocol, Other.Output: StringProtocol {
        /// Whether the string contains the other.
        public typealias Output = Bool

        /// The string searched.
        public let root: Root
        /// The string searched for.
        public let other: Other

        /// The test of whether `root` contains `other`.
        public init(root: Root, other: Other) {
            self.root = root
            self.other = other
        }

        /// Evaluates both strings and compares them.
        public func evaluate(_ bindings: PredicateBindings) throws -> Bool {
            let text = try root.evaluate(bindings)
            return text.localizedStandardContains(try other.evaluate(bindings))
        }
    }

    // swift-format-ignore: AlwaysUseLowerCamelCase
    // The name is the one `#Predicate` expands the method call to.
    /// What `#Predicate` calls for `$0.name.localizedStandardContains(text)`.
    public static func build_localizedStandardContains<Root, Other>(
        _ root: Root, _ other: Other
    ) -> StringLocalizedStandardContains<Root, Other> {
        StringLocalizedStandardContains(root: root, other: other)
    }
}

extension PredicateExpressions.StringLocalizedStandardContains: StandardPredicateExpression
where Root: StandardPredicateExpression, Other: StandardPredicateExpression {}

extension PredicateExpressions.StringLocalizedStandardContains: Sendable where Root: Sendable, Other: Sendable {}

extension PredicateExpressions.StringLocalizedStandardContains: Codable where Root: Codable, Other: Codable {
    /// Encodes the two strings' expressions, in order.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.unkeyedContainer()
        try container.encode(root)
        try container.encode(other)
    }

    /// Decodes what ``encode(to:)`` writes.
    public init(from decoder: any Decoder) throws {
        var container = try decoder.unkeyedContainer()
        root = try container.decode(Root.self)
        other = try container.decode(Other.self)
    }
}
