#if canImport(Glibc)
    import Glibc
    import Testing

    @testable import ModelStore

    /// glibc's `malloc_usable_size`, which its module map leaves out: how many bytes a heap block
    /// holds, 8 less than the block.
    @_silgen_name("malloc_usable_size")
    private func mallocUsableSize(_ pointer: UnsafeMutableRawPointer?) -> Int

    /// The size of a model's ``BackingData`` in the heap, which every model in memory pays once.
    struct BackingDataLayoutTests {
        /// Its stored properties are declared words first and one-byte flags last, so the object
        /// (85 bytes) fits a 96-byte block; flags between the words padded it into a 128-byte one.
        @Test func aModelsStateFitsANinetySixByteBlock() {
            let backing = BackingData()
            let usable = mallocUsableSize(Unmanaged.passUnretained(backing).toOpaque())
            #expect(usable <= 88, "BackingData now takes a \(usable + 8)-byte block; keep its flags after its words")
            withExtendedLifetime(backing) {}
        }

        /// The identifier, the largest field, keeps its `nil` in its spare bits, so the flags after it
        /// start at its 25th byte.
        @Test func anOptionalIdentifierTakesNoMoreThanAnIdentifier() {
            #expect(MemoryLayout<PersistentIdentifier?>.size == MemoryLayout<PersistentIdentifier>.size)
        }
    }
#endif
