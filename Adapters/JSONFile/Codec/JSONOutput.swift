import Foundation

/// A growable byte buffer that JSON text is written into, with the primitives of the document encoder.
///
/// It writes straight into unsafe memory: no per-value `String` is built on the hot path except
/// for `Double`, whose shortest round-tripping form comes from the standard library (and fits
/// in a small, unallocated string).
final class JSONOutput {
    /// The buffer's state, kept in unsafe memory so the hot paths pay no exclusivity checks.
    private struct State {
        var base: UnsafeMutablePointer<UInt8>
        var capacity: Int
        var count: Int
    }

    private let state: UnsafeMutablePointer<State>

    init(capacity: Int = 1 << 16) {
        let capacity = max(capacity, 64)
        state = .allocate(capacity: 1)
        state.initialize(to: State(base: .allocate(capacity: capacity), capacity: capacity, count: 0))
    }

    deinit {
        state.pointee.base.deallocate()
        state.deinitialize(count: 1)
        state.deallocate()
    }

    /// The start of the buffer (valid until the next write).
    var base: UnsafeMutablePointer<UInt8> {
        @inline(__always) get { state.pointee.base }
    }

    /// How many bytes have been written.
    var count: Int {
        @inline(__always) get { state.pointee.count }
        @inline(__always) set { state.pointee.count = newValue }
    }

    /// The written bytes.
    func withBytes<R>(_ body: (UnsafeBufferPointer<UInt8>) throws -> R) rethrows -> R {
        try body(UnsafeBufferPointer(start: base, count: count))
    }

    /// A copy of the written bytes.
    var bytes: [UInt8] { withBytes { Array($0) } }

    @inline(__always)
    func reserve(_ extra: Int) {
        if state.pointee.count &+ extra > state.pointee.capacity { grow(state.pointee.count + extra) }
    }

    /// Makes room for at least `total` bytes in all, so a document whose size is known ahead grows once.
    func reserveCapacity(_ total: Int) {
        if total > state.pointee.capacity { grow(total) }
    }

    @inline(never)
    private func grow(_ needed: Int) {
        var newCapacity = state.pointee.capacity * 2
        while newCapacity < needed { newCapacity *= 2 }
        newCapacity = Swift.max(newCapacity, needed)
        let newBase = UnsafeMutablePointer<UInt8>.allocate(capacity: newCapacity)
        newBase.update(from: state.pointee.base, count: state.pointee.count)
        state.pointee.base.deallocate()
        state.pointee.base = newBase
        state.pointee.capacity = newCapacity
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
        // A native string lends its bytes in place; only another kind is copied into contiguous form.
        if text.utf8.withContiguousStorageIfAvailable({ quoted($0) }) != nil { return }
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
        // Plain bytes go eight at a time (``SWAR``), then one at a time from the word with a byte to escape.
        if let source = utf8.baseAddress {
            while index &+ 8 <= end,
                !SWAR.hasStringSpecial(UnsafeRawPointer(source + index).loadUnaligned(as: UInt64.self))
            {
                index &+= 8
            }
        }
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
            byte(UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: value))
            return
        }
        reserve(20)
        let digits = Self.digitCount(value)
        var position = count &+ digits
        var rest = value
        let base = self.base
        // "00" through "99" in constant memory: no array to look up and retain per number.
        let pairs: StaticString = """
            00010203040506070809101112131415161718192021222324252627282930313233343536373839\
            40414243444546474849505152535455565758596061626364656667686970717273747576777879\
            8081828384858687888990919293949596979899
            """
        let pair = pairs.utf8Start
        while rest >= 100 {
            let (quotient, remainder) = rest.quotientAndRemainder(dividingBy: 100)
            position &-= 2
            base[position] = pair[Int(remainder) &* 2]
            base[position &+ 1] = pair[Int(remainder) &* 2 &+ 1]
            rest = quotient
        }
        if rest >= 10 {
            position &-= 2
            base[position] = pair[Int(rest) &* 2]
            base[position &+ 1] = pair[Int(rest) &* 2 &+ 1]
        } else {
            position &-= 1
            base[position] = UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: rest)
        }
        count &+= digits
    }

    @inline(__always)
    private static func digitCount(_ value: UInt64) -> Int {
        var digits = 1
        var threshold: UInt64 = 10
        while digits < 20 && value >= threshold {
            digits &+= 1
            if digits == 20 { break }
            threshold = threshold &* 10
        }
        return digits
    }

    /// Writes a finite `Double` in its shortest form that reads back to the same bits, always
    /// with a `.` or an exponent so that it reads back as a floating-point number.
    ///
    /// Values with at most four decimals below 2^53 (prices, scores, most timestamps) are written
    /// directly; others use the standard library's shortest round-tripping description.
    ///
    /// - Precondition: `value.isFinite`.
    func double(_ value: Double) {
        let magnitude = abs(value)
        if magnitude < 9e15 && (magnitude >= 1e-3 || value == 0) {
            var scale = 1.0
            for decimals in 0...4 {
                let scaled = (magnitude * scale).rounded()
                if scaled < 9_007_199_254_740_992 && scaled / scale == magnitude {
                    writeFixed(UInt64(scaled), decimals: decimals, negative: value.sign == .minus)
                    return
                }
                scale *= 10
            }
        }
        raw(value.description)
    }

    /// `digits` with a decimal point `decimals` places from the right (at least one digit each side).
    private func writeFixed(_ digits: UInt64, decimals: Int, negative: Bool) {
        if negative { byte(UInt8(ascii: "-")) }
        guard decimals > 0 else {
            uint(digits)
            bytes(UInt8(ascii: "."), UInt8(ascii: "0"))
            return
        }
        var divisor: UInt64 = 1
        for _ in 0..<decimals { divisor &*= 10 }
        let (whole, fraction) = digits.quotientAndRemainder(dividingBy: divisor)
        uint(whole)
        byte(UInt8(ascii: "."))
        reserve(decimals)
        var rest = fraction
        var position = count &+ decimals
        let base = self.base
        for _ in 0..<decimals {
            position &-= 1
            base[position] = UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: rest % 10)
            rest /= 10
        }
        count &+= decimals
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
