/// Marks a class whose `PersistentModel` conformance `@Model` declared, so that `@Model` on a
/// subclass can tell it inherits a model.
///
/// The compiler gives `@Model` the conformances the class does not have yet: a subclass of a `@Model`
/// class already has this one; a root class has not, even when it conforms to `PersistentModel`
/// through a protocol of the app's. The protocol has no requirements.
public protocol _MacroModel: AnyObject {}
