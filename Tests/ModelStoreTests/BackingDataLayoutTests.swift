#if canImport(Glibc)
    import Testing

    @testable import ModelStore

    /// A class of one word, whose instance size is known (a 16-byte object header and 8 bytes), so
    /// the test can check that it reads class metadata where the instance size is.
    private final class OneWord {
        var word = 0
    }

    /// The instance size the Swift runtime allocates for objects of `type`, read from its class
    /// metadata. Without Objective-C interoperation (Linux), the metadata holds the isa-like kind
    /// word, the superclass, 32-bit flags and the 32-bit instance address point, then the 32-bit
    /// instance size at byte 24.
    private func instanceSize(of type: AnyClass) -> Int {
        let metadata = unsafeBitCast(type, to: UnsafeRawPointer.self)
        return Int(metadata.load(fromByteOffset: 24, as: UInt32.self))
    }

    /// The size of a model's ``BackingData`` in the heap, which every model in memory pays once.
    struct BackingDataLayoutTests {
        /// Its stored properties are declared words first and one-byte flags last, so the object
        /// (85 bytes) fits a 96-byte glibc block, whose 8-byte header leaves 88 bytes; flags between
        /// the words padded it to 112 bytes, a 128-byte block.
        ///
        /// The test reads the size the runtime asks `malloc` for, not the block `malloc` returned:
        /// glibc may hand out a larger free block whole when splitting it would leave a remainder
        /// too small to use, so `malloc_usable_size` of one object depends on the heap's history
        /// (a CI run saw a 112-byte block for this 85-byte object).
        @Test func aModelsStateFitsANinetySixByteBlock() {
            #expect(instanceSize(of: OneWord.self) == 24, "class metadata is not laid out as this test reads it")
            let size = instanceSize(of: BackingData.self)
            #expect(
                size <= 88, "BackingData now takes \(size) bytes, over a 96-byte block; keep its flags after its words")
        }

        /// The identifier, the largest field, keeps its `nil` in its spare bits, so the flags after it
        /// start at its 25th byte.
        @Test func anOptionalIdentifierTakesNoMoreThanAnIdentifier() {
            #expect(MemoryLayout<PersistentIdentifier?>.size == MemoryLayout<PersistentIdentifier>.size)
        }
    }
#endif
