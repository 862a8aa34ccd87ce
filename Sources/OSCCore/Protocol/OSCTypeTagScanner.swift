/// Reads a message that liblo refuses although it is well-formed OSC 1.0/1.1: arrays (`[` `]`)
/// and RGBA colours (`r`). Every argument outside an array is decoded as liblo would decode it
/// (so `/ping` echoes a colour with the rest); an array comes back as `unsupported("[")`, one
/// per opening bracket and one per element, so a parameter or command answers with a type error
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
            let argument: OSCArgument
            switch tag {
            case UInt8(ascii: "i"), UInt8(ascii: "f"), UInt8(ascii: "r"), UInt8(ascii: "c"), UInt8(ascii: "m"):
                guard let word = read(bytes, at: offset, count: 4) else { return nil }
                argument = decodeWord(tag, Array(word))
                offset += 4
            case UInt8(ascii: "h"), UInt8(ascii: "d"), UInt8(ascii: "t"):
                guard let word = read(bytes, at: offset, count: 8) else { return nil }
                let bits = word.reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
                argument = tag == UInt8(ascii: "h") ? .int64(Int64(bitPattern: bits))
                    : tag == UInt8(ascii: "d") ? .double(Double(bitPattern: bits)) : .timetag(bits)
                offset += 8
            case UInt8(ascii: "s"), UInt8(ascii: "S"):
                guard offset < bytes.count, let end = bytes[offset...].firstIndex(of: 0) else { return nil }
                let text = String(decoding: bytes[offset..<end], as: UTF8.self)
                argument = tag == UInt8(ascii: "s") ? .string(text) : .symbol(text)
                offset = padded(end + 1)
            case UInt8(ascii: "b"):
                guard let size = read(bytes, at: offset, count: 4) else { return nil }
                let length = Int(Int32(bitPattern: bigEndianWord(Array(size))))
                guard length >= 0, let data = read(bytes, at: offset + 4, count: length) else { return nil }
                argument = .blob(Array(data))
                offset = padded(offset + 4 + length)
            case UInt8(ascii: "T"): argument = .bool(true)
            case UInt8(ascii: "F"): argument = .bool(false)
            case UInt8(ascii: "N"): argument = .nil_
            case UInt8(ascii: "I"): argument = .impulse
            case UInt8(ascii: "["):
                depth += 1
                argument = .unsupported("[")
            case UInt8(ascii: "]"):
                guard depth > 0 else { return nil }
                depth -= 1
                continue
            default:
                return nil
            }
            // Inside an array every element stands for the array.
            arguments.append(depth > 0 ? .unsupported("[") : argument)
        }
        guard depth == 0, offset <= bytes.count else { return nil }
        return arguments
    }

    private static func bigEndianWord(_ word: [UInt8]) -> UInt32 {
        UInt32(word[0]) << 24 | UInt32(word[1]) << 16 | UInt32(word[2]) << 8 | UInt32(word[3])
    }

    private static func decodeWord(_ tag: UInt8, _ word: [UInt8]) -> OSCArgument {
        let bits = bigEndianWord(word)
        switch tag {
        case UInt8(ascii: "i"): return .int32(Int32(bitPattern: bits))
        case UInt8(ascii: "f"): return .float(Float(bitPattern: bits))
        case UInt8(ascii: "c"): return .char(word[3])
        case UInt8(ascii: "m"): return .midi(port: word[0], status: word[1], data1: word[2], data2: word[3])
        default: return .rgba(red: word[0], green: word[1], blue: word[2], alpha: word[3])
        }
    }

    private static func read(_ bytes: [UInt8], at offset: Int, count: Int) -> ArraySlice<UInt8>? {
        guard count >= 0, offset >= 0, offset + count <= bytes.count else { return nil }
        return bytes[offset..<(offset + count)]
    }

    /// The next multiple of 4.
    private static func padded(_ offset: Int) -> Int { (offset + 3) & ~3 }
}
