/// Reads a message that liblo refuses although it is well-formed OSC 1.0/1.1: arrays (`[` `]`)
/// and RGBA colours (`r`). Every argument keeps its place; the ones SoundFit does not interpret
/// come back `unsupported` with their tag, so a parameter or command answers with a type error
/// that names its address instead of "malformed".
enum OSCTypeTagScanner {
    /// The arguments of the message in `bytes` whose address ends at `addressEnd` (its NUL),
    /// or nil when the message is not well-formed after all.
    static func arguments(of bytes: [UInt8], addressEnd: Int) -> [OSCArgument]? {
        var offset = padded(addressEnd + 1)
        guard offset < bytes.count, bytes[offset] == UInt8(ascii: ",") else { return nil }
        guard let tagsEnd = bytes[offset...].firstIndex(of: 0) else { return nil }
        let tags = bytes[(offset + 1)..<tagsEnd]
        offset = padded(tagsEnd + 1)
        var arguments: [OSCArgument] = []
        var depth = 0
        for tag in tags {
            switch tag {
            case UInt8(ascii: "i"), UInt8(ascii: "f"), UInt8(ascii: "r"), UInt8(ascii: "c"), UInt8(ascii: "m"):
                guard let word = read(bytes, at: offset, count: 4) else { return nil }
                arguments.append(depth > 0 ? .unsupported("[") : decodeWord(tag, word))
                offset += 4
            case UInt8(ascii: "h"), UInt8(ascii: "d"), UInt8(ascii: "t"):
                guard read(bytes, at: offset, count: 8) != nil else { return nil }
                arguments.append(.unsupported(Character(UnicodeScalar(tag))))
                offset += 8
            case UInt8(ascii: "s"), UInt8(ascii: "S"):
                guard offset < bytes.count, let end = bytes[offset...].firstIndex(of: 0) else { return nil }
                let text = String(decoding: bytes[offset..<end], as: UTF8.self)
                arguments.append(depth > 0 ? .unsupported("[") : tag == UInt8(ascii: "s") ? .string(text) : .symbol(text))
                offset = padded(end + 1)
            case UInt8(ascii: "b"):
                guard let size = read(bytes, at: offset, count: 4) else { return nil }
                let length = Int(bigEndianWord(size))
                guard length >= 0, read(bytes, at: offset + 4, count: length) != nil else { return nil }
                arguments.append(.unsupported("b"))
                offset = padded(offset + 4 + length)
            case UInt8(ascii: "T"), UInt8(ascii: "F"), UInt8(ascii: "N"), UInt8(ascii: "I"):
                arguments.append(.unsupported(Character(UnicodeScalar(tag))))
            case UInt8(ascii: "["):
                depth += 1
                arguments.append(.unsupported("["))
            case UInt8(ascii: "]"):
                guard depth > 0 else { return nil }
                depth -= 1
            default:
                return nil
            }
        }
        guard depth == 0, offset <= bytes.count else { return nil }
        return arguments
    }

    private static func bigEndianWord(_ word: ArraySlice<UInt8>) -> UInt32 {
        let i = word.startIndex
        return UInt32(word[i]) << 24 | UInt32(word[i + 1]) << 16 | UInt32(word[i + 2]) << 8 | UInt32(word[i + 3])
    }

    private static func decodeWord(_ tag: UInt8, _ word: ArraySlice<UInt8>) -> OSCArgument {
        let bits = bigEndianWord(word)
        switch tag {
        case UInt8(ascii: "i"): return .int32(Int32(bitPattern: bits))
        case UInt8(ascii: "f"): return .float(Float(bitPattern: bits))
        default: return .unsupported(Character(UnicodeScalar(tag)))
        }
    }

    private static func read(_ bytes: [UInt8], at offset: Int, count: Int) -> ArraySlice<UInt8>? {
        guard count >= 0, offset >= 0, offset + count <= bytes.count else { return nil }
        return bytes[offset..<(offset + count)]
    }

    /// The next multiple of 4.
    private static func padded(_ offset: Int) -> Int { (offset + 3) & ~3 }
}
