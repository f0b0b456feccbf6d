@_spi(Reflection) import Swift

/// The one use of the standard library's private reflection: the stored fields of a class, with
/// the byte offset of each inside an instance.
///
/// ``ModelLayout`` calls it once per model type and from then on reads and writes property
/// storage through fixed offsets, as compiled code does. Nothing else in the framework reflects.
///
/// `_forEachField(of:options:_:)` is SPI of the standard library (`@_spi(Reflection)`), not API:
/// its behaviour is not promised across Swift releases. What this file relies on, each checked by
/// `StoredFieldReflectionTests` so that a toolchain that changes it fails the tests loudly rather
/// than corrupting models at run time:
///
/// 1. **Classes are walked with `_EachFieldOptions.classType` (raw value 1).** Without that
///    option the walk refuses a class and visits nothing.
/// 2. **Stored properties are visited in declaration order, computed ones not at all.** The order
///    is the order of the declarations in the source, which becomes the slot order of a model's
///    properties. (Models are final classes; what the walk does with a superclass's fields is not
///    relied on.)
/// 3. **Names are the stored properties' names.** A property wrapper's or a macro's backing
///    storage is visited under its own name (`_name` for a wrapped `name`), not the wrapped one.
/// 4. **Offsets are from the start of the object**, header included: the field's storage is at
///    `Unmanaged.passUnretained(object).toOpaque() + offset`.
/// 5. **The type reported is the storage's declared type** (the wrapper type for a wrapped
///    property), so `as? SomeProtocol.Type` casts on it find the wrapper's conformances.
enum StoredFieldReflection {
    /// One stored field of a class.
    struct Field {
        /// The stored property's name, as declared (backing storage keeps its leading `_`).
        let name: String
        /// The byte offset of the field's storage from the start of an instance.
        let offset: Int
        /// The field's declared type.
        let type: Any.Type
    }

    /// The stored fields of a class, in declaration order (see the rules above).
    static func fields(of type: AnyClass) -> [Field] {
        var fields: [Field] = []
        _ = _forEachField(of: type, options: _EachFieldOptions(rawValue: 1)) { cName, offset, fieldType, _ in
            fields.append(Field(name: String(cString: cName), offset: offset, type: fieldType))
            return true
        }
        return fields
    }
}
