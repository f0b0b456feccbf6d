/// The first case of an enum that has one to find: a `CaseIterable` one's first, or the case of a
/// raw-value enum whose tag is zero.
///
/// A raw-value enum (`enum Rating: String { case good, bad }`) has no payloads, so its cases are
/// the tags 0, 1, 2… in one byte (none for an enum of one case): the value whose bytes are zero is
/// its first case. The type must be an enum by its metadata (kind 0x201 in Swift's stable ABI),
/// `RawRepresentable` and at most a byte wide, and the value must give back its raw value, or no
/// value is made. This reads the type's metadata once per type, never per model.
enum FirstCase {
    /// The first case of `type`, or `nil` when it is not such an enum.
    static func of<Value>(_ type: Value.Type) -> Value? {
        if let cases = type as? any CaseIterable.Type, let first = firstCase(cases) as? Value { return first }
        guard let raw = type as? any RawRepresentable.Type, MemoryLayout<Value>.size <= 1, isEnum(type) else {
            return nil
        }
        let value = withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 1) { buffer in
            buffer[0] = 0
            return UnsafeRawPointer(buffer.baseAddress!).load(as: Value.self)
        }
        return roundTrips(value, as: raw) ? value : nil
    }

    private static func firstCase<C: CaseIterable>(_ type: C.Type) -> Any? { C.allCases.first }

    /// Whether the metadata of `type` is an enum's (not an optional's, a struct's or a class's).
    private static func isEnum(_ type: Any.Type) -> Bool {
        let enumKind: UInt = 0x201
        return unsafeBitCast(type, to: UnsafePointer<UInt>.self).pointee == enumKind
    }

    private static func roundTrips<Value, R: RawRepresentable>(_ value: Value, as: R.Type) -> Bool {
        guard let typed = value as? R else { return false }
        return R(rawValue: typed.rawValue) != nil
    }
}
