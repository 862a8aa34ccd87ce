import Testing

extension SoundFitIntegration {
    /// `/ping` echoes every argument type, and every other address answers a
    /// type error naming itself for the types it does not take.
    @Suite("/ping echoes every argument type") struct PingEcho {
        static let everyType: [OSCValue] = [
            .int(-7), .int64(1 << 40), .float(2.5), .double(-0.125), .string("s"),
            .blob([1, 2, 3, 0xC0, 0xDB]), .timetag(0x83AA_7E80_8000_0000), .char(UInt8(ascii: "A")),
            .midi(0, 0x90, 0x3C, 0x7F), .rgba(0xFF80_40C0), .true, .false, .null, .impulse, .blob([]),
        ]

        @Test("/ping ,ihfdsbtcmrTFNIb: the /pong is the request byte for byte, over UDP and TCP")
        func echoIsByteForByte() throws {
            let rig = try Rig.start(.process(channels: 1))
            defer { rig.stop() }
            let request = OSCWire.encode(OSCTestMessage("/ping", Self.everyType))
            rig.osc.sendRaw(request)
            let pong = try rig.osc.waitFor("/pong") { $0.address == "/pong" }.match
            #expect(pong.arguments == Self.everyType)
            let udpEcho = try #require(rig.osc.packets.last)
            #expect(Array(udpEcho.prefix(8)) == Array("/pong".utf8) + [0, 0, 0])
            #expect(Array(udpEcho.dropFirst(8)) == Array(request.dropFirst(8)), "UDP echo differs")

            let tcp = try OSCTCPTestClient(port: try #require(rig.ready.oscTCPPort))
            tcp.sendPacket(request)
            _ = try tcp.waitFor("/pong") { $0.address == "/pong" }
            #expect(Array(try #require(tcp.packets.last).dropFirst(8)) == Array(request.dropFirst(8)), "TCP echo differs")

            // Only a char and a MIDI message (oscsend's `c` and `m` types), which liblo decodes itself.
            rig.osc.send("/ping", .char(UInt8(ascii: "x")), .midi(1, 0xB0, 7, 100))
            #expect(try rig.osc.waitFor("/pong") { $0.address == "/pong" }.match.arguments
                    == [.char(UInt8(ascii: "x")), .midi(1, 0xB0, 7, 100)])
        }

        @Test("a blob, timetag, char, MIDI or colour anywhere else is a type error naming the address; /ping refuses arrays")
        func otherAddressesRefuseThem() throws {
            try Rig.run(.process(channels: 1)) { rig in
                for value in [OSCValue.blob([1]), .timetag(1), .char(65), .midi(0, 0x90, 1, 2), .rgba(0xFFFF_FFFF)] {
                    let error = try rig.osc.ask("/filter/cutoff", [value], reply: "/filter/cutoff")
                    expectErrorReply(error, for: "/filter/cutoff")
                    let patchError = try rig.osc.ask("/patch/load", [value], reply: "/patch/current")
                    expectErrorReply(patchError, for: "/patch/load")
                }
                #expect(try rig.osc.query("/filter/cutoff") == .float(1000))
                // An array: `/ping ,i[ii]`.
                var array = OSCWire.padded(Array("/ping".utf8)) + OSCWire.padded(Array(",i[ii]".utf8))
                array += OSCWire.bigEndian(Int32(1)) + OSCWire.bigEndian(Int32(2)) + OSCWire.bigEndian(Int32(3))
                rig.osc.sendRaw(array)
                expectErrorReply(try rig.osc.waitFor("/error") { $0.address == "/error" }.match, for: "/ping", hint: "array")
            }
        }
    }
}
