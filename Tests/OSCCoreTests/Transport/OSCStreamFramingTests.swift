@testable import OSCCore
import Testing

/// SLIP (RFC 1055, OSC 1.1) and length-prefixed framing of OSC packets on a stream.
@Suite struct OSCStreamFramingTests {
    static let awkward: [UInt8] = [0x2F, 0xC0, 0xDB, 0xDC, 0xDD, 0xC0, 0xDB, 0x00]

    @Test func slipEscapesEndAndEscapeAndWrapsThePacketInEnds() {
        #expect(OSCStreamFraming.slip.frame(Self.awkward)
                == [0xC0, 0x2F, 0xDB, 0xDC, 0xDB, 0xDD, 0xDC, 0xDD, 0xDB, 0xDC, 0xDB, 0xDD, 0x00, 0xC0])
        #expect(OSCStreamFraming.lengthPrefixed.frame([1, 2, 3]) == [0, 0, 0, 3, 1, 2, 3])
    }

    @Test func theFirstByteDecidesTheFraming() {
        #expect(OSCStreamFraming(firstByte: 0xC0) == .slip)
        #expect(OSCStreamFraming(firstByte: UInt8(ascii: "/")) == .slip)
        #expect(OSCStreamFraming(firstByte: UInt8(ascii: "#")) == .slip)
        #expect(OSCStreamFraming(firstByte: 0) == .lengthPrefixed)
    }

    @Test(arguments: [OSCStreamFraming.slip, .lengthPrefixed])
    func packetsSurviveAnySplitAndAnyGrouping(_ framing: OSCStreamFraming) {
        let packets: [[UInt8]] = [Self.awkward, Array("/ping".utf8) + [0, 0, 0, 0x2C, 0, 0, 0], [0xC0, 0xC0, 0xC0, 0xC0]]
        let stream = packets.flatMap(framing.frame)
        // Every way of cutting the stream in two, and byte by byte.
        for cut in 0...stream.count {
            var deframer = OSCStreamDeframer(maximumPacketBytes: 64)
            let events = deframer.read(Array(stream[..<cut])) + deframer.read(Array(stream[cut...]))
            #expect(events == packets.map { .packet($0) }, "cut at \(cut)")
            #expect(deframer.framing == framing)
        }
        var deframer = OSCStreamDeframer(maximumPacketBytes: 64)
        #expect(stream.flatMap { deframer.read([$0]) } == packets.map { .packet($0) })
    }

    @Test func slipWithoutLeadingEndAndEmptyPacketsBetweenEnds() {
        var deframer = OSCStreamDeframer(maximumPacketBytes: 64)
        #expect(deframer.read([0x2F, 0x61, 0xC0, 0xC0, 0xC0, 0x2F, 0x62, 0xC0]) == [.packet([0x2F, 0x61]), .packet([0x2F, 0x62])])
        // RFC 1055: an ESC before any other byte stands for that byte.
        #expect(deframer.read([0x2F, 0xDB, 0x41, 0xC0]) == [.packet([0x2F, 0x41])])
    }

    @Test func anOversizedPacketIsDiscardedAndTheNextOneIsRead() {
        var slip = OSCStreamDeframer(maximumPacketBytes: 8)
        let large = [UInt8](repeating: 0xC0, count: 100)
        #expect(slip.read(OSCStreamFraming.slip.frame(large) + OSCStreamFraming.slip.frame([1, 2]))
                == [.oversized(100), .packet([1, 2])])

        var prefixed = OSCStreamDeframer(maximumPacketBytes: 8)
        let stream = OSCStreamFraming.lengthPrefixed.frame(large) + OSCStreamFraming.lengthPrefixed.frame([1, 2])
        #expect(prefixed.read(Array(stream[..<10])) == [.oversized(100)], "reported as soon as its size is known")
        #expect(prefixed.read(Array(stream[10...])) == [.packet([1, 2])])
        // A size of 0 is an empty packet (answered as undecodable, like an empty datagram).
        #expect(prefixed.read([0, 0, 0, 0]) == [.packet([])])
    }
}
