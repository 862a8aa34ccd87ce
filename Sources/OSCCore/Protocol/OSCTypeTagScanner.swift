/// Reads a message that liblo refuses only for its type tags although it is well-formed OSC
/// 1.0/1.1: arrays (`[` `]`) and RGBA colours (`r`). An RGBA colour is decoded (so `/ping`
/// echoes it); an array comes back as `unsupported("[")`, one per opening bracket and one per
/// element, so a parameter or command answers with a type error that names its address
/// instead of "malformed".
///
/// liblo still decodes the message: each of these tags is replaced, in a copy, by one liblo
/// knows with the same bytes on the wire (`r` by `i`, four bytes; `[` and `]` by `N`, none), and
/// the arguments liblo reads are mapped back.
enum OSCTypeTagScanner {
    /// The arguments of the message in `bytes` whose address ends at `addressEnd` (its NUL),
    /// or nil when the message is not well-formed after all.
    static func arguments(of bytes: [UInt8], addressEnd: Int) -> [OSCArgument]? {
        // Why not liblo: liblo 0.31 has no `r` and no arrays (its type tags: lo_type in lo_osc_types.h).
        let comma = (addressEnd + 4) & ~3
        guard comma < bytes.count, bytes[comma] == UInt8(ascii: ","),
              let tagsEnd = bytes[comma...].firstIndex(of: 0) else { return nil }
        let tags = bytes[(comma + 1)..<tagsEnd]
        var known = bytes
        var depth = 0
        for (index, tag) in zip(tags.indices, tags) {
            switch tag {
            case UInt8(ascii: "r"): known[index] = UInt8(ascii: "i")
            case UInt8(ascii: "["):
                depth += 1
                known[index] = UInt8(ascii: "N")
            case UInt8(ascii: "]"):
                guard depth > 0 else { return nil }
                depth -= 1
                known[index] = UInt8(ascii: "N")
            default: break
            }
        }
        guard depth == 0, known != bytes, let decoded = OSCCodec.decodeWithLiblo(&known) else { return nil }
        var arguments: [OSCArgument] = []
        for (tag, argument) in zip(tags, decoded) {
            switch tag {
            case UInt8(ascii: "["):
                depth += 1
                arguments.append(.unsupported("["))
            case UInt8(ascii: "]"):
                depth -= 1
            case UInt8(ascii: "r"):
                guard case .int32(let value) = argument else { return nil }
                let bits = UInt32(bitPattern: value)
                let colour = OSCArgument.rgba(red: UInt8(bits >> 24), green: UInt8(bits >> 16 & 0xFF),
                                              blue: UInt8(bits >> 8 & 0xFF), alpha: UInt8(bits & 0xFF))
                // Inside an array every element stands for the array.
                arguments.append(depth > 0 ? .unsupported("[") : colour)
            default:
                arguments.append(depth > 0 ? .unsupported("[") : argument)
            }
        }
        return arguments
    }
}
