import Foundation
import Glibc
import Testing

extension SoundFitIntegration {
    /// OSC over TCP (OSC 1.1 SLIP framing, and liblo's length-prefixed
    /// streams) on the UDP port number, with the same contract, against the real binary.
    @Suite("OSC over TCP") struct OSCOverTCP {
        private func tcpPort(_ rig: SoundFitRig) throws -> UInt16 {
            guard let port = rig.ready.oscTCPPort else {
                throw IntegrationError("the ready line names no OSC TCP listener: \(rig.ready.fields)")
            }
            #expect(port == rig.ready.oscPort, "TCP listens on the UDP port number")
            return port
        }

        /// Waits until `/status` (over UDP) reports `key` equal to `value`.
        private func waitForStatus(_ rig: SoundFitRig, _ key: String, _ value: OSCValue) throws {
            _ = try rig.osc.waitForStatus(timeout: .seconds(10)) { $0[key] == value }
        }

        @Test("ping, set, query, an error and a bundle over a SLIP connection are answered over it; /status and the ready line name the listener")
        func requestsOverSLIP() throws {
            let rig = try Rig.start(.process(channels: 1))
            defer { rig.stop() }
            let port = try tcpPort(rig)
            try rig.osc.sync()  // what the start left for the UDP client, so it sees only what follows
            let tcp = try OSCTCPTestClient(port: port)
            try tcp.ping()
            var roundTrips: [Double] = []
            for _ in 0..<50 { roundTrips.append(Double(try tcp.ping().components.attoseconds) / 1e12) }
            roundTrips.sort()
            report("OSC over TCP (SLIP) /ping round trip median", roundTrips[25], unit: "us")
            report("OSC over TCP (SLIP) /ping round trip max of 50", roundTrips[49], unit: "us")

            expectApplied(try tcp.set("/filter/cutoff", .float(2500)), "/filter/cutoff", .float(2500))
            tcp.send("/filter/cutoff")
            #expect(try tcp.waitFor("query reply") { $0.address == "/filter/cutoff" }.arguments == [.float(2500)])
            tcp.send("/no/such/address", .int(1))
            expectErrorReply(try tcp.waitFor("/error") { $0.address == "/error" }, for: "/no/such/address")

            // A bundle: both changes land, both are reported over the connection.
            tcp.sendPacket(OSCWire.encodeBundle([OSCTestMessage("/filter/q", [.float(2)]),
                                                 OSCTestMessage("/output/gain", [.float(-6)])]))
            // The two changes finish in either order (the gain needs no ramp), so take both
            // terminal states as they come: waiting for one by name would discard the other.
            let bundled: Set<String> = ["/filter/q", "/output/gain"]
            var terminals: [String: OSCTestMessage] = [:]
            while terminals.count < bundled.count {
                let terminal = try tcp.waitFor("terminal /state of \(bundled.subtracting(terminals.keys).sorted())") {
                    $0.isTerminalState && bundled.contains($0.string(0) ?? "")
                }
                terminals[terminal.string(0) ?? ""] = terminal
            }
            for (address, terminal) in terminals { #expect(terminal.string(1) == "applied", "\(address): \(terminal)") }
            // Nothing meant for the TCP client went out over UDP. Every answer to the TCP requests
            // was sent before their /synced; SoundFit sends every UDP datagram from its one socket,
            // so one misrouted to this client would have come before the UDP client's /synced.
            try tcp.sync()
            let overUDP = try rig.osc.sync()
            #expect(overUDP.isEmpty, "\(overUDP)")
            #expect(try rig.osc.query("/filter/q") == .float(2))
            #expect(try rig.osc.query("/output/gain") == .float(-6))
            #expect(try rig.osc.query("/filter/cutoff") == .float(2500))

            let status = try rig.osc.status()
            #expect(status["osc_tcp"] == .string("tcp://127.0.0.1:\(port)"))
            #expect(status["osc_udp"] == .string("udp://127.0.0.1:\(rig.ready.oscPort)"))
            #expect(status["osc_tcp_connections"] == .int(1))
        }

        @Test("liblo's oscsend osc.tcp:// (length-prefixed) is understood; a length-prefixed client is answered length-prefixed")
        func lengthPrefixedStreams() throws {
            let rig = try Rig.start(.process(channels: 1))
            defer { rig.stop() }
            let port = try tcpPort(rig)
            let oscsend = try runToEnd(["/usr/bin/oscsend", "osc.tcp://127.0.0.1:\(port)", "/filter/cutoff", "f", "3210"],
                                       timeout: .seconds(30))
            #expect(oscsend.status == 0, "oscsend: \(oscsend.stderr)")
            let deadline = ContinuousClock.now + .seconds(10)
            while try rig.osc.query("/filter/cutoff") != .float(3210), ContinuousClock.now < deadline {
                Thread.sleep(forTimeInterval: 0.05)  // polls a condition (with a deadline)
            }
            #expect(try rig.osc.query("/filter/cutoff") == .float(3210), "oscsend osc.tcp:// set the cutoff")

            let tcp = try OSCTCPTestClient(port: port, framing: .lengthPrefixed)
            try tcp.ping()
            expectApplied(try tcp.set("/filter/q", .float(3)), "/filter/q", .float(3))
            tcp.send("/status")
            #expect(try tcp.waitFor("/status") { $0.address == "/status" }.arguments.count > 10)
        }

        @Test("SLIP: END and ESC bytes inside a packet, a packet split across writes, several packets in one write")
        func slipFraming() throws {
            let rig = try Rig.start(.process(channels: 1))
            defer { rig.stop() }
            let tcp = try OSCTCPTestClient(port: try tcpPort(rig))

            // Every argument carries 0xC0 (END) and 0xDB (ESC) bytes; U+06C0 is 0xDB 0x80 in UTF-8.
            let request = OSCWire.encode(OSCTestMessage("/ping", [
                .blob([0xC0, 0xDB, 0xDC, 0xDD, 0xC0, 0xC0]), .int(Int32(bitPattern: 0xC0DB_DBC0)), .string("\u{06C0}x\u{06C0}"),
                .float(Float(bitPattern: 0xC0DB_00C0)),
            ]))
            #expect(request.contains(0xC0) && request.contains(0xDB))
            tcp.sendPacket(request)
            _ = try tcp.waitFor("/pong") { $0.address == "/pong" }
            let pong = try #require(tcp.packets.last)
            #expect(Array(pong.dropFirst(8)) == Array(request.dropFirst(8)), "the echo differs from the request")

            // One packet, one byte per write.
            for byte in TestStreamFraming.slip.frame(OSCWire.encode(OSCTestMessage("/ping", [.int(7)]))) {
                tcp.writeRaw([byte])
                Thread.sleep(forTimeInterval: 0.002)  // pacing: one byte per segment
            }
            #expect(try tcp.waitFor("/pong 7") { $0.address == "/pong" }.arguments == [.int(7)])

            // Three packets in one write; also one without the leading END (RFC 1055's plain form).
            var bytes: [UInt8] = []
            for id in 1...3 { bytes += TestStreamFraming.slip.frame(OSCWire.encode(OSCTestMessage("/ping", [.int(Int32(id))]))) }
            bytes += Array(TestStreamFraming.slip.frame(OSCWire.encode(OSCTestMessage("/ping", [.int(4)]))).dropFirst())
            tcp.writeRaw(bytes)
            var ids: [OSCValue] = []
            for _ in 1...4 { ids += try tcp.waitFor("/pong") { $0.address == "/pong" }.arguments }
            #expect(ids == [.int(1), .int(2), .int(3), .int(4)], "answered in order")
        }

        @Test("a packet over 16384 bytes is discarded and answered with /error; the connection goes on (SLIP and length-prefixed)")
        func oversizedPackets() throws {
            let rig = try Rig.start(.process(channels: 1))
            defer { rig.stop() }
            let port = try tcpPort(rig)
            for framing in [TestStreamFraming.slip, .lengthPrefixed] {
                let tcp = try OSCTCPTestClient(port: port, framing: framing)
                tcp.send("/ping", .blob([UInt8](repeating: 0xC0, count: 20000)))
                let error = try tcp.waitFor("/error for the oversized packet") { $0.address == "/error" }
                #expect(error.string(0) == "" && (error.string(1) ?? "").contains("16384"), "\(framing): \(error)")
                try tcp.ping()
                #expect(tcp.packets.allSatisfy { $0.count < 1000 }, "nothing of the oversized packet was echoed")
            }
        }

        @Test("64 connections are served; the 65th is closed at once; a closed one frees its slot")
        func connectionLimit() throws {
            try Rig.run(.process(channels: 1)) { rig in
                let port = try tcpPort(rig)
                var clients: [OSCTCPTestClient] = []
                for _ in 0..<64 {
                    let client = try OSCTCPTestClient(port: port)
                    try client.ping()
                    clients.append(client)
                }
                try waitForStatus(rig, "osc_tcp_connections", .int(64))
                let extra = try OSCTCPTestClient(port: port)
                extra.send("/ping")
                #expect(extra.waitForClose(timeout: .seconds(5)), "the 65th connection was not closed")
                #expect(extra.packets.isEmpty)
                try clients[63].ping()

                clients.removeFirst()
                try waitForStatus(rig, "osc_tcp_connections", .int(63))
                let again = try OSCTCPTestClient(port: port)
                try again.ping()
                try rig.osc.ping()
            }
        }

        @Test("a subscriber that never reads is dropped; other TCP and UDP clients are answered meanwhile")
        func slowReader() throws {
            try Rig.run(.process(channels: 1)) { rig in
                let port = try tcpPort(rig)
                let slow = try OSCTCPTestClient(port: port, receiveBufferBytes: 4096)
                slow.send("/subscribe")
                let other = try OSCTCPTestClient(port: port)
                try other.ping()
                try waitForStatus(rig, "subscribers", .int(1))

                // The slow client floods requests whose replies it never reads, while feedback flows
                // to it; another connection's /pong every 50 requests paces the flood.
                let start = ContinuousClock.now
                var worstPing: Duration = .zero
                var writes = 0
                var cutoff: Float = 500
                while slow.send("/list"), ContinuousClock.now - start < .seconds(30) {
                    writes += 1
                    if writes % 50 == 0 {
                        worstPing = max(worstPing, try other.ping())
                        cutoff = cutoff == 500 ? 600 : 500
                        rig.osc.send("/filter/cutoff", .float(cutoff))
                    }
                }
                let dropped = ContinuousClock.now - start
                #expect(slow.waitForClose(timeout: .seconds(10)), "the slow reader's connection was not closed")
                report("OSC over TCP: slow reader dropped after", Double(dropped.components.seconds) + Double(dropped.components.attoseconds) / 1e18, unit: "s")
                report("OSC over TCP: slow reader /list requests written", Double(writes), unit: "requests")
                report("OSC over TCP: worst /ping of another connection meanwhile", Double(worstPing.components.attoseconds) / 1e15, unit: "ms")
                #expect(worstPing < .seconds(1))
                try waitForStatus(rig, "osc_tcp_connections", .int(1))
                try waitForStatus(rig, "subscribers", .int(0))
                try other.ping()
                let reports = try rig.osc.setWithID("/filter/cutoff", .float(700), id: 77)
                #expect(reports.last?.string(1) == "applied", "\(reports)")
            }
        }

        @Test("/subscribe over a connection: confirmation, snapshot and feedback over it; the subscription ends with the connection")
        func subscriptionOverTCP() throws {
            let rig = try Rig.start(.process(channels: 1))
            defer { rig.stop() }
            var tcp: OSCTCPTestClient? = try OSCTCPTestClient(port: try tcpPort(rig))
            tcp?.send("/subscribe")
            let confirmation = try #require(try tcp?.waitFor("/subscribed") { $0.address == "/subscribed" })
            #expect(confirmation.string(0) == tcp?.url && confirmation.string(1) == "native", "\(confirmation)")
            _ = try tcp?.waitFor("snapshot of /filter/cutoff") { $0.address == "/filter/cutoff" && $0.arguments == [.float(1000)] }
            expectApplied(try rig.osc.set("/filter/cutoff", .float(4321)), "/filter/cutoff", .float(4321))
            _ = try tcp?.waitFor("feedback of /filter/cutoff") { $0.address == "/filter/cutoff" && $0.arguments == [.float(4321)] }
            try waitForStatus(rig, "subscribers", .int(1))
            tcp = nil
            try waitForStatus(rig, "subscribers", .int(0))
            try waitForStatus(rig, "osc_tcp_connections", .int(0))
        }

        @Test("--osc-allow: a connection from outside the list is closed unanswered and changes nothing")
        func allowList() throws {
            try Rig.run(.process(channels: 1, arguments: ["--osc-allow", "127.0.0.1/32"])) { rig in
                let port = try tcpPort(rig)
                let outsider = try OSCTCPTestClient(port: port, localAddress: loopbackAddress(2))
                outsider.send("/ping")
                outsider.send("/filter/cutoff", .float(5000))
                #expect(outsider.waitForClose(timeout: .seconds(5)), "the outsider's connection stayed open")
                #expect(outsider.packets.isEmpty, "the outsider got answers")
                #expect(try rig.osc.query("/filter/cutoff") == .float(1000))
                let insider = try OSCTCPTestClient(port: port)
                try insider.ping()
            }
        }

        @Test("--no-osc-tcp: the ready line and /status say off, and nothing listens on TCP")
        func turnedOff() throws {
            let rig = try Rig.start(.process(channels: 1, arguments: ["--no-osc-tcp"]))
            defer { rig.stop() }
            #expect(rig.ready.fields["osc_tcp"] == "off" && rig.ready.oscTCPPort == nil)
            let status = try rig.osc.status()
            #expect(status["osc_tcp"] == .string("off"))
            #expect(throws: IntegrationError.self) { try OSCTCPTestClient(port: rig.ready.oscPort) }
        }
    }
}
