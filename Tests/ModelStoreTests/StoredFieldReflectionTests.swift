import Foundation
import Testing

@testable import ModelStore

/// The assumptions `StoredFieldReflection` makes about the standard library's `_forEachField`,
/// one test per rule: if a toolchain changes one, these fail by name instead of models reading
/// the wrong bytes.
struct StoredFieldReflectionTests {
    @propertyWrapper struct Wrapped<Value> {
        var wrappedValue: Value
    }

    final class Probe {
        var small: Int8 = 3
        var name: String = "probe"
        var computed: Int { 99 }
        @Wrapped var ratio: Double = 2.5
        var count: Int64 = 7
    }

    private func fields() -> [StoredFieldReflection.Field] { StoredFieldReflection.fields(of: Probe.self) }

    @Test func classesAreWalkedAndStoredFieldsComeInDeclarationOrder() {
        // Rules 1 and 2: a class is walked at all, computed properties are skipped, order is the source's.
        #expect(fields().map(\.name) == ["small", "name", "_ratio", "count"])
    }

    @Test func wrappedPropertiesAreVisitedUnderTheirBackingStorageName() {
        // Rule 3.
        #expect(fields().contains { $0.name == "_ratio" })
        #expect(!fields().contains { $0.name == "ratio" })
    }

    @Test func offsetsAddressTheFieldsInsideAnInstance() throws {
        // Rule 4: reading and writing through `base + offset` is reading and writing the property.
        let probe = Probe()
        let base = Unmanaged.passUnretained(probe).toOpaque()
        let byName = Dictionary(uniqueKeysWithValues: fields().map { ($0.name, $0.offset) })
        let small = try #require(byName["small"])
        let count = try #require(byName["count"])
        let ratio = try #require(byName["_ratio"])
        let name = try #require(byName["name"])
        #expect(base.load(fromByteOffset: small, as: Int8.self) == 3)
        #expect(base.load(fromByteOffset: count, as: Int64.self) == 7)
        #expect(base.load(fromByteOffset: ratio, as: Wrapped<Double>.self).wrappedValue == 2.5)
        #expect((base + name).assumingMemoryBound(to: String.self).pointee == "probe")
        base.storeBytes(of: 41, toByteOffset: count, as: Int64.self)
        (base + name).assumingMemoryBound(to: String.self).pointee = "changed"
        #expect(probe.count == 41)
        #expect(probe.name == "changed")
        #expect(Set(fields().map(\.offset)).count == 4)
        #expect(fields().allSatisfy { $0.offset >= MemoryLayout<Int>.size * 2 })
    }

    @Test func typesAreTheDeclaredStorageTypes() {
        // Rule 5: the wrapper type for a wrapped property, so casts find its conformances.
        let types = fields().map { ObjectIdentifier($0.type) }
        let declared: [Any.Type] = [Int8.self, String.self, Wrapped<Double>.self, Int64.self]
        #expect(types == declared.map { ObjectIdentifier($0) })
    }
}
