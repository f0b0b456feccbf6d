import ModelStore

extension Schema.Attribute.Options {
    /// SwiftData's option to index the attribute with Spotlight: accepted, so that models port
    /// unchanged, and without effect (Spotlight exists only on Apple platforms): the same as no option.
    public static var spotlight: Self { [] }
}
