import Foundation

/// A growable byte buffer that JSON text is written into, with the primitives of the document encoder.
///
/// It writes straight into unsafe memory: no per-value `String` is built on the hot path except
/// for `Double`, whose shortest round-tripping form comes from the standard library (and fits
/// in a small, unallocated string).
final class JSONOutput {
    private(set) var base: UnsafeMutablePointer<UInt8>
    private(set) var capacity: Int
    /// How many bytes have been written.
    private(set) var count = 0

    init(capacity: Int = 1 << 16) {
        self.capacity = max(capacity, 64)
        base = .allocate(capacity: self.capacity)
    }

    deinit { base.deallocate() }

    /// The written bytes.
    func withBytes<R>(_ body: (UnsafeBufferPointer<UInt8>) throws -> R) rethrows -> R {
        try body(UnsafeBufferPointer(start: base, count: count))
    }

    /// A copy of the written bytes.
    var bytes: [UInt8] { withBytes { Array($0) } }

    @inline(__always)
    func reserve(_ extra: Int) {
        if count &+ extra > capacity { grow(count + extra) }
    }

    @inline(never)
    private func grow(_ needed: Int) {
        var newCapacity = capacity * 2
        while newCapacity < needed { newCapacity *= 2 }
        let newBase = UnsafeMutablePointer<UInt8>.allocate(capacity: newCapacity)
        newBase.update(from: base, count: count)
        base.deallocate()
        base = newBase
        capacity = newCapacity
    }

    // MARK: Raw bytes

    @inline(__always)
    func byte(_ value: UInt8) {
        reserve(1)
        base[count] = value
        count &+= 1
    }

    @inline(__always)
    func bytes(_ first: UInt8, _ second: UInt8) {
        reserve(2)
        base[count] = first
        base[count &+ 1] = second
        count &+= 2
    }

    func bytes(_ buffer: UnsafeBufferPointer<UInt8>) {
        guard let source = buffer.baseAddress, !buffer.isEmpty else { return }
        reserve(buffer.count)
        (base + count).update(from: source, count: buffer.count)
        count &+= buffer.count
    }

    func bytes(_ array: [UInt8]) {
        array.withUnsafeBufferPointer { bytes($0) }
    }

    /// Writes ASCII text that needs no escaping, such as punctuation and keys known at compile time.
    func ascii(_ text: StaticString) {
        bytes(UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }

    /// Writes the UTF-8 of a string as is, without quotes or escaping.
    func raw(_ text: String) {
        var text = text
        text.withUTF8 { bytes($0) }
    }

    // MARK: Strings

    /// Writes a JSON string: quotes, with `"`, `\` and the control characters escaped.
    func string(_ text: String) {
        var text = text
        text.withUTF8 { quoted($0) }
    }

    /// Writes UTF-8 bytes as a JSON string.
    func quoted(_ utf8: UnsafeBufferPointer<UInt8>) {
        reserve(utf8.count &+ 2)
        base[count] = UInt8(ascii: "\"")
        count &+= 1
        var runStart = 0
        var index = 0
        let end = utf8.count
        while index < end {
            let byte = utf8[index]
            if byte >= 0x20 && byte != UInt8(ascii: "\"") && byte != UInt8(ascii: "\\") {
                index &+= 1
                continue
            }
            if index > runStart { bytes(UnsafeBufferPointer(rebasing: utf8[runStart..<index])) }
            escape(byte)
            index &+= 1
            runStart = index
        }
        if end > runStart { bytes(UnsafeBufferPointer(rebasing: utf8[runStart..<end])) }
        byte(UInt8(ascii: "\""))
    }

    private func escape(_ byte: UInt8) {
        switch byte {
        case UInt8(ascii: "\""): bytes(UInt8(ascii: "\\"), UInt8(ascii: "\""))
        case UInt8(ascii: "\\"): bytes(UInt8(ascii: "\\"), UInt8(ascii: "\\"))
        case 0x0A: bytes(UInt8(ascii: "\\"), UInt8(ascii: "n"))
        case 0x0D: bytes(UInt8(ascii: "\\"), UInt8(ascii: "r"))
        case 0x09: bytes(UInt8(ascii: "\\"), UInt8(ascii: "t"))
        case 0x08: bytes(UInt8(ascii: "\\"), UInt8(ascii: "b"))
        case 0x0C: bytes(UInt8(ascii: "\\"), UInt8(ascii: "f"))
        default:
            reserve(6)
            ascii("\\u00")
            bytes(JSONOutput.hexDigits[Int(byte >> 4)], JSONOutput.hexDigits[Int(byte & 0xF)])
        }
    }

    static let hexDigits: [UInt8] = Array("0123456789abcdef".utf8)

    /// Writes an object key, escaping a leading `$` (see the file format's tag rule) when `escapesDollar` is set.
    func key(_ name: String, escapesDollar: Bool = false) {
        if escapesDollar, name.utf8.first == UInt8(ascii: "$") {
            string("$" + name)
        } else {
            string(name)
        }
        byte(UInt8(ascii: ":"))
    }

    // MARK: Numbers

    /// Writes an integer in decimal.
    func int(_ value: Int64) {
        if value < 0 {
            byte(UInt8(ascii: "-"))
            uint(value.magnitude)
        } else {
            uint(UInt64(value))
        }
    }

    /// Writes an unsigned integer in decimal.
    func uint(_ value: UInt64) {
        if value < 10 {
            byte(UInt8(ascii: "0") &+ UInt8(value))
            return
        }
        reserve(20)
        var digits = 0
        var rest = value
        while rest > 0 {
            digits &+= 1
            rest /= 10
        }
        rest = value
        var position = count &+ digits
        while rest > 0 {
            position &-= 1
            let (quotient, remainder) = rest.quotientAndRemainder(dividingBy: 10)
            base[position] = UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: remainder)
            rest = quotient
        }
        count &+= digits
    }

    /// Writes a finite `Double` in its shortest form that reads back to the same bits, always
    /// with a `.` or an exponent so that it reads back as a floating-point number.
    ///
    /// - Precondition: `value.isFinite`.
    func double(_ value: Double) {
        if value == value.rounded(.towardZero), abs(value) < 1e15 {
            // Integral values: the digits, then ".0" (keeping the sign of -0.0).
            if value.sign == .minus { byte(UInt8(ascii: "-")) }
            uint(UInt64(abs(value)))
            bytes(UInt8(ascii: "."), UInt8(ascii: "0"))
            return
        }
        raw(value.description)
    }

    // MARK: Scalars in text form

    /// Writes bytes as a quoted base64 string (RFC 4648, with padding).
    func base64(_ data: Data) {
        data.withUnsafeBytes { raw in
            let input = raw.bindMemory(to: UInt8.self)
            let length = (input.count + 2) / 3 * 4
            reserve(length + 2)
            base[count] = UInt8(ascii: "\"")
            var out = count + 1
            JSONOutput.base64Alphabet.withUnsafeBufferPointer { alphabet in
                var index = 0
                while index + 3 <= input.count {
                    let chunk = UInt32(input[index]) << 16 | UInt32(input[index + 1]) << 8 | UInt32(input[index + 2])
                    base[out] = alphabet[Int(chunk >> 18)]
                    base[out + 1] = alphabet[Int(chunk >> 12 & 0x3F)]
                    base[out + 2] = alphabet[Int(chunk >> 6 & 0x3F)]
                    base[out + 3] = alphabet[Int(chunk & 0x3F)]
                    out += 4
                    index += 3
                }
                let remaining = input.count - index
                if remaining > 0 {
                    let first = UInt32(input[index]) << 16
                    let chunk = remaining == 2 ? first | UInt32(input[index + 1]) << 8 : first
                    base[out] = alphabet[Int(chunk >> 18)]
                    base[out + 1] = alphabet[Int(chunk >> 12 & 0x3F)]
                    base[out + 2] = remaining == 2 ? alphabet[Int(chunk >> 6 & 0x3F)] : UInt8(ascii: "=")
                    base[out + 3] = UInt8(ascii: "=")
                    out += 4
                }
            }
            base[out] = UInt8(ascii: "\"")
            count = out + 1
        }
    }

    static let base64Alphabet: [UInt8] = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)

    /// Writes a UUID as a quoted, upper-case, hyphenated string (the form of `UUID.uuidString`).
    func uuid(_ value: UUID) {
        reserve(38)
        base[count] = UInt8(ascii: "\"")
        var out = count + 1
        withUnsafeBytes(of: value.uuid) { raw in
            for index in 0..<16 {
                if index == 4 || index == 6 || index == 8 || index == 10 {
                    base[out] = UInt8(ascii: "-")
                    out += 1
                }
                base[out] = JSONOutput.upperHexDigits[Int(raw[index] >> 4)]
                base[out + 1] = JSONOutput.upperHexDigits[Int(raw[index] & 0xF)]
                out += 2
            }
        }
        base[out] = UInt8(ascii: "\"")
        count = out + 1
    }

    static let upperHexDigits: [UInt8] = Array("0123456789ABCDEF".utf8)
}
