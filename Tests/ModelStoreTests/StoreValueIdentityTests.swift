import Foundation
import ModelStore
import Testing

/// `StoreValue.isIdentical(to:)` compares text by its bytes, not by Swift's canonical equivalence.
struct StoreValueIdentityTests {
    @Test func textIsIdenticalOnlyWithTheSameBytes() {
        let composed = "\u{e9}mile"
        let decomposed = "e\u{301}mile"
        #expect(composed == decomposed, "Swift calls them equal")
        #expect(!StoreValue.string(composed).isIdentical(to: .string(decomposed)))
        let copied = String(decoding: Array(composed.utf8), as: UTF8.self)
        #expect(StoreValue.string(composed).isIdentical(to: .string(copied)))
        #expect(StoreValue.string("").isIdentical(to: .string("")))
        #expect(!StoreValue.string("").isIdentical(to: .string("a")))
        let long = String(repeating: "long text past the small-string limit ", count: 4)
        #expect(StoreValue.string(long).isIdentical(to: .string(long + "")))
        #expect(!StoreValue.string(long + "a").isIdentical(to: .string(long + "b")))
    }

    @Test func dictionaryKeysAndURLsCompareByBytesToo() throws {
        let one = StoreValue.dictionary(["\u{e9}": .int(1)])
        #expect(!one.isIdentical(to: .dictionary(["e\u{301}": .int(1)])))
        #expect(one.isIdentical(to: .dictionary(["\u{e9}": .int(1)])))
        let url = try #require(URL(string: "https://example.com/a"))
        #expect(StoreValue.url(url).isIdentical(to: .url(try #require(URL(string: "https://example.com/a")))))
        #expect(!StoreValue.url(url).isIdentical(to: .url(try #require(URL(string: "https://example.com/b")))))
    }
}
