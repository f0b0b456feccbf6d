import Foundation

/// Parsers for the scalars the document stores as text: base64 data, UUIDs and decimals.
enum TextScalars {
    private static let base64Values: [UInt8] = {
        var table = [UInt8](repeating: 0xFF, count: 256)
        for (index, byte) in JSONOutput.base64Alphabet.enumerated() { table[Int(byte)] = UInt8(index) }
        return table
    }()

    /// Decodes standard base64 (RFC 4648 alphabet, padding optional); `nil` if the text is not base64.
    static func base64(_ text: UnsafeBufferPointer<UInt8>) -> Data? {
        var length = text.count
        while length > 0 && text[length - 1] == UInt8(ascii: "=") { length -= 1 }
        guard text.count - length <= 2, length % 4 != 1 else { return nil }
        if text.count != length && text.count % 4 != 0 { return nil }
        let outputCount = length / 4 * 3 + max(0, length % 4 - 1)
        var data = Data(count: outputCount)
        let valid = data.withUnsafeMutableBytes { raw -> Bool in
            guard let output = raw.baseAddress?.assumingMemoryBound(to: UInt8.self) else { return length == 0 }
            return base64Values.withUnsafeBufferPointer { values in
                var accumulator: UInt32 = 0
                var bits = 0
                var out = 0
                for index in 0..<length {
                    let value = values[Int(text[index])]
                    if value == 0xFF { return false }
                    accumulator = accumulator << 6 | UInt32(value)
                    bits += 6
                    if bits >= 8 {
                        bits -= 8
                        output[out] = UInt8(truncatingIfNeeded: accumulator >> UInt32(bits))
                        out += 1
                    }
                }
                // Leftover bits must be zero, as a canonical encoder writes them.
                return accumulator & ((1 << UInt32(bits)) - 1) == 0
            }
        }
        return valid ? data : nil
    }

    /// Parses a hyphenated UUID (either case), `nil` if malformed.
    static func uuid(_ text: UnsafeBufferPointer<UInt8>) -> UUID? {
        guard text.count == 36 else { return nil }
        var bytes = [UInt8](repeating: 0, count: 16)
        var index = 0
        for position in 0..<16 {
            if position == 4 || position == 6 || position == 8 || position == 10 {
                guard text[index] == UInt8(ascii: "-") else { return nil }
                index += 1
            }
            guard let high = hexValue(text[index]), let low = hexValue(text[index + 1]) else { return nil }
            bytes[position] = high << 4 | low
            index += 2
        }
        return UUID(
            uuid: (
                bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7],
                bytes[8], bytes[9], bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15]
            ))
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }

    /// Whether text is a number in JSON's grammar (the form decimals are stored in).
    static func isJSONNumber(_ text: UnsafeBufferPointer<UInt8>) -> Bool {
        var index = 0
        func digits() -> Int {
            let start = index
            while index < text.count, text[index] >= UInt8(ascii: "0"), text[index] <= UInt8(ascii: "9") { index += 1 }
            return index - start
        }
        if index < text.count, text[index] == UInt8(ascii: "-") { index += 1 }
        guard digits() > 0 else { return false }
        if index < text.count, text[index] == UInt8(ascii: ".") {
            index += 1
            guard digits() > 0 else { return false }
        }
        if index < text.count, text[index] == UInt8(ascii: "e") || text[index] == UInt8(ascii: "E") {
            index += 1
            if index < text.count, text[index] == UInt8(ascii: "+") || text[index] == UInt8(ascii: "-") { index += 1 }
            guard digits() > 0 else { return false }
        }
        return index == text.count
    }

    /// The exact decimal for text in JSON's number grammar, `nil` otherwise.
    static func decimal(_ text: UnsafeBufferPointer<UInt8>) -> Decimal? {
        guard isJSONNumber(text) else { return nil }
        return Decimal(string: String(decoding: text, as: UTF8.self), locale: Locale(identifier: "en_US_POSIX"))
    }
}
