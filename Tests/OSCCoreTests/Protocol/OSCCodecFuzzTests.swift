import Foundation
@testable import OSCCore
import OSCTestSupport
import Testing

/// A bounded fuzzing run of the OSC decoder: random and mutated packets with every type tag
/// never crash it; every packet decodes or is refused with a reason.
@Suite struct OSCCodecFuzzTests {
    @Test("20 000 random, mutated and truncated packets: no crash; well-formed ones decode")
    func fuzz() {
        var random = SeededRandom(seed: 0xF022)
        var decoded = 0, refused = 0
        for round in 0..<20_000 {
            var packet = OSCWirePackets.randomMessage(&random)
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
                    let inner = OSCWirePackets.bundle((0..<Int.random(in: 0...3, using: &random)).map { _ in OSCWirePackets.randomMessage(&random) })
                    packet = OSCWirePackets.bundle([inner, OSCWirePackets.randomMessage(&random)])
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
        #expect(throws: OSCCodec.DecodingError.self) { try OSCCodec.decode(message("i]", [0, 0, 0, 1])) }
        // liblo reads these too (retagged), so they are held to its checks: bytes beyond the
        // arguments or a truncated argument refuse a colour or an array like any message.
        for (tags, data) in [("r", [UInt8](repeating: 1, count: 8)), ("[i]", [0, 0, 0, 1, 9, 9, 9, 9]), ("ir", [0, 0, 0, 1, 2])] {
            #expect(throws: OSCCodec.DecodingError.self, "\(tags)") { try OSCCodec.decode(message(tags, data)) }
        }
        #expect(throws: OSCCodec.DecodingError.self) { try OSCCodec.decode(message("i", [UInt8](repeating: 1, count: 8))) }
    }

    @Test("Every argument type encodes as OSC lays it out and decodes back, alone and all together")
    func everyArgumentTypeRoundTrips() throws {
        func wire(_ entries: [(OSCArgument, tag: Character, bytes: [UInt8])]) -> [UInt8] {
            var tags = Array(",\(String(entries.map(\.tag)))".utf8) + [0]
            while tags.count % 4 != 0 { tags.append(0) }
            return Array("/ping".utf8) + [0, 0, 0] + tags + entries.flatMap(\.bytes)
        }
        for entry in OSCWirePackets.everyType {
            let message = OSCMessage("/ping", [entry.0])
            #expect(OSCCodec.encode(message) == wire([entry]), "\(entry.0)")
            #expect(try OSCCodec.decode(wire([entry])) == .message(message), "\(entry.0)")
        }
        let all = OSCMessage("/ping", OSCWirePackets.everyType.map(\.0))
        #expect(OSCCodec.encode(all) == wire(OSCWirePackets.everyType))
        #expect(try OSCCodec.decode(wire(OSCWirePackets.everyType)) == .message(all))
    }
}
