import Foundation
@testable import SoundFitOSC
import SoundFitTestSupport
import Testing

/// A bounded fuzzing run of the OSC decoder: random and mutated packets with every type tag
/// never crash it; every packet decodes or is refused with a reason.
@Suite struct OSCCodecFuzzTests {
    static let tags = Array("ifsSbhdtcrmTFNI[]".utf8)

    /// A well-formed message with random arguments of every type tag (arrays included).
    static func randomMessage(_ random: inout SeededRandom) -> [UInt8] {
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

    static func bundle(_ elements: [[UInt8]]) -> [UInt8] {
        var bytes = Array("#bundle".utf8) + [0] + [0, 0, 0, 0, 0, 0, 0, 1]
        for element in elements {
            let size = UInt32(element.count)
            bytes += [UInt8(size >> 24), UInt8(size >> 16 & 0xFF), UInt8(size >> 8 & 0xFF), UInt8(size & 0xFF)] + element
        }
        return bytes
    }

    @Test("20 000 random, mutated and truncated packets: no crash; well-formed ones decode")
    func fuzz() {
        var random = SeededRandom(seed: 0xF022)
        var decoded = 0, refused = 0
        for round in 0..<20_000 {
            var packet = Self.randomMessage(&random)
            let wellFormed = round % 4 == 0
            if !wellFormed {
                switch round % 4 {
                case 1:  // flip bytes
                    for _ in 0..<Int.random(in: 1...4, using: &random) where !packet.isEmpty {
                        packet[Int.random(in: 0..<packet.count, using: &random)] ^= UInt8.random(in: 1...255, using: &random)
                    }
                case 2:  // truncate
                    packet = Array(packet.prefix(Int.random(in: 0...packet.count, using: &random)))
                default:  // a bundle of messages, possibly nested, possibly cut
                    let inner = Self.bundle((0..<Int.random(in: 0...3, using: &random)).map { _ in Self.randomMessage(&random) })
                    packet = Self.bundle([inner, Self.randomMessage(&random)])
                    if Bool.random(using: &random) { packet = Array(packet.prefix(Int.random(in: 0...packet.count, using: &random))) }
                }
            }
            do {
                _ = try OSCCodec.decode(packet)
                decoded += 1
            } catch {
                #expect(!error.description.isEmpty)
                refused += 1
            }
            if wellFormed {
                #expect((try? OSCCodec.decode(packet)) != nil, "a well-formed message was refused: \(packet)")
            }
        }
        print("measured: OSC decoder fuzz: \(decoded) decoded, \(refused) refused")
        #expect(decoded >= 5000 && refused > 0)
    }

    @Test("Arrays decode with their arguments marked unsupported, not as malformed; a colour decodes with the rest")
    func arraysAndColours() throws {
        func message(_ tags: String, _ data: [UInt8]) -> [UInt8] {
            var address = Array("/filter/cutoff".utf8) + [0]
            while address.count % 4 != 0 { address.append(0) }
            var typeTags = Array(",\(tags)".utf8) + [0]
            while typeTags.count % 4 != 0 { typeTags.append(0) }
            return address + typeTags + data
        }
        let array = try OSCCodec.decode(message("[ii]", [0, 0, 0, 1, 0, 0, 0, 2]))
        #expect(array == .message(OSCMessage("/filter/cutoff", [.unsupported("["), .unsupported("["), .unsupported("[")])))
        let colour = try OSCCodec.decode(message("rit", [255, 0, 0, 255, 0, 0, 0, 9, 1, 2, 3, 4, 5, 6, 7, 8]))
        #expect(colour == .message(OSCMessage("/filter/cutoff", [.rgba(red: 255, green: 0, blue: 0, alpha: 255), .int32(9),
                                                                  .timetag(0x0102_0304_0506_0708)])))
        #expect(throws: OSCCodec.DecodingError.self) { try OSCCodec.decode(message("[i", [0, 0, 0, 1])) }
    }

    /// Every type, as OSC 1.0/1.1 lays it out, written by hand (not by liblo).
    static let everyType: [(OSCArgument, tag: Character, bytes: [UInt8])] = [
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

    @Test("Every argument type encodes as OSC lays it out and decodes back, alone and all together")
    func everyArgumentTypeRoundTrips() throws {
        func wire(_ entries: [(OSCArgument, tag: Character, bytes: [UInt8])]) -> [UInt8] {
            var tags = Array(",\(String(entries.map(\.tag)))".utf8) + [0]
            while tags.count % 4 != 0 { tags.append(0) }
            return Array("/ping".utf8) + [0, 0, 0] + tags + entries.flatMap(\.bytes)
        }
        for entry in Self.everyType {
            let message = OSCMessage("/ping", [entry.0])
            #expect(OSCCodec.encode(message) == wire([entry]), "\(entry.0)")
            #expect(try OSCCodec.decode(wire([entry])) == .message(message), "\(entry.0)")
        }
        let all = OSCMessage("/ping", Self.everyType.map(\.0))
        #expect(OSCCodec.encode(all) == wire(Self.everyType))
        #expect(try OSCCodec.decode(wire(Self.everyType)) == .message(all))
    }
}
