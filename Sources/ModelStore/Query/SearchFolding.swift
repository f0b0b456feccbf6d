import Foundation

extension StringProtocol {
    /// The string as a case-, diacritic- and width-insensitive search sees it: `"Musée"` becomes
    /// `"musee"`, `"ＡＢＣ"` becomes `"abc"`, `"Straße"` becomes `"strasse"`.
    ///
    /// Foundation on Linux has no `localizedStandardContains` in `#Predicate`. Keep a folded copy
    /// of the text in an attribute of its own, kept in step by `didSet`, and search it with
    /// `contains`, which every store runs (SQL stores in SQL, using no collation):
    ///
    /// ```swift
    /// @Attribute var name = "" { didSet { nameKey = name.foldedForSearch } }
    /// @Attribute var nameKey = ""
    ///
    /// let key = query.foldedForSearch
    /// // SwiftData: #Predicate<Place> { $0.name.localizedStandardContains(query) }
    /// let matches = #Predicate<Place> { $0.nameKey.contains(key) }
    /// ```
    ///
    /// The folding uses no locale, so every process and store folds alike; it differs from
    /// `localizedStandardContains` only in locale-specific rules (a Turkish dotless `ı`, say).
    public var foldedForSearch: String {
        String(self).folding(options: [.caseInsensitive, .diacriticInsensitive, .widthInsensitive], locale: nil)
    }
}
