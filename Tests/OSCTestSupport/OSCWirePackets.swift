import OSCCore

/// OSC packets written by hand, byte by byte (not by liblo), for the codec's tests and the
/// surface's: random well-formed messages, bundles, every argument type as the wire lays it out.
public enum OSCWirePackets {
    public static let tags = Array("ifsSbhdtcrmTFNI[]".utf8)

    /// A well-formed message with random arguments of every type tag (arrays included).
    public static func randomMessage<Random: RandomNumberGenerator>(_ random: inout Random) -> [UInt8] {
        func pad(_ bytes: [UInt8]) -> [UInt8] { bytes + [UInt8](repeating: 0, count: 4 - bytes.count % 4) }
        func randomBytes(_ count: Int) -> [UInt8] { (0..<count).map { _ in UInt8.random(in: 0...255, using: &random) } }
        var typeTags: [UInt8] = [UInt8(ascii: ",")]
        var data: [UInt8] = []
        var open = 0
        for _ in 0..<Int.random(in: 0...8, using: &random) {
            let tag = tags.randomElement(using: &random)!
            if tag == UInt8(ascii: "]") && open == 0 { continue }
            typeTags.append(tag)
            switch tag {
            case UInt8(ascii: "i"), UInt8(ascii: "f"), UInt8(ascii: "r"), UInt8(ascii: "c"), UInt8(ascii: "m"): data += randomBytes(4)
            case UInt8(ascii: "h"), UInt8(ascii: "d"), UInt8(ascii: "t"): data += randomBytes(8)
            case UInt8(ascii: "s"), UInt8(ascii: "S"):
                data += pad((0..<Int.random(in: 0...12, using: &random)).map { _ in UInt8.random(in: 32...126, using: &random) })
            case UInt8(ascii: "b"):
                let length = Int.random(in: 0...9, using: &random)
                data += [0, 0, 0, UInt8(length)] + randomBytes(length) + [UInt8](repeating: 0, count: (4 - length % 4) % 4)
            case UInt8(ascii: "["): open += 1
            case UInt8(ascii: "]"): open -= 1
            default: break
            }
        }
        typeTags += [UInt8](repeating: UInt8(ascii: "]"), count: open)
        let address = ["/filter/cutoff", "/ping", "/x", "/processing/preset", "/a/b/c"].randomElement(using: &random)!
        return pad(Array(address.utf8)) + pad(typeTags) + data
    }

    /// A bundle timetagged "immediately" holding `elements`.
    public static func bundle(_ elements: [[UInt8]]) -> [UInt8] {
        var bytes = Array("#bundle".utf8) + [0] + [0, 0, 0, 0, 0, 0, 0, 1]
        for element in elements {
            let size = UInt32(element.count)
            bytes += [UInt8(size >> 24), UInt8(size >> 16 & 0xFF), UInt8(size >> 8 & 0xFF), UInt8(size & 0xFF)] + element
        }
        return bytes
    }

    /// Every type, as OSC 1.0/1.1 lays it out, written by hand (not by liblo).
    public static let everyType: [(OSCArgument, tag: Character, bytes: [UInt8])] = [
        (.int32(-2), "i", [0xFF, 0xFF, 0xFF, 0xFE]),
        (.int64(1 << 40), "h", [0, 0, 1, 0, 0, 0, 0, 0]),
        (.float(1), "f", [0x3F, 0x80, 0, 0]),
        (.double(-2), "d", [0xC0, 0, 0, 0, 0, 0, 0, 0]),
        (.string("ab"), "s", [0x61, 0x62, 0, 0]),
        (.symbol("abcd"), "S", [0x61, 0x62, 0x63, 0x64, 0, 0, 0, 0]),
        (.blob([0xC0, 0xDB, 7]), "b", [0, 0, 0, 3, 0xC0, 0xDB, 7, 0]),
        (.blob([]), "b", [0, 0, 0, 0]),
        (.timetag(0x83AA_7E80_0000_0001), "t", [0x83, 0xAA, 0x7E, 0x80, 0, 0, 0, 1]),
        (.char(0x41), "c", [0, 0, 0, 0x41]),
        (.midi(port: 1, status: 0x90, data1: 0x3C, data2: 0x7F), "m", [1, 0x90, 0x3C, 0x7F]),
        (.rgba(red: 0xFF, green: 0x80, blue: 0x40, alpha: 0x20), "r", [0xFF, 0x80, 0x40, 0x20]),
        (.bool(true), "T", []), (.bool(false), "F", []), (.nil_, "N", []), (.impulse, "I", []),
    ]
}
