import Foundation
import Glibc
import Testing

extension SoundFitIntegration {
    /// One packet must never start an endless exchange: SoundFit subscribed to its own port, a
    /// packet whose source is SoundFit's own port, replies sent back to SoundFit, two instances
    /// pointed at each other. A loop shows as a core's worth of CPU time and as values changed
    /// by forged packets; both are measured.
    @Suite("OSC feedback loops") struct OSCFeedbackLoops {
        /// Every reply form SoundFit sends; none of them may be answered.
        static let replies: [OSCTestMessage] = [
            OSCTestMessage("/error", [.string("/nothing"), .string("unknown address /nothing")]),
            OSCTestMessage("/pong"),
            OSCTestMessage("/pong", [.int(7)]),
            OSCTestMessage("/subscribed", [.string("osc.udp://127.0.0.1:9"), .string("native")]),
            OSCTestMessage("/unsubscribed", [.string("osc.udp://127.0.0.1:9")]),
            OSCTestMessage("/list/param", [.string("/filter/q"), .string("float"), .string("rw"), .float(0.1), .float(18),
                                           .float(0.7071), .string("")]),
            OSCTestMessage("/list/end", [.int(14)]),
            OSCTestMessage("/patch/item", [.int(0), .string("Transparent")]),
            OSCTestMessage("/patch/end", [.int(1)]),
            OSCTestMessage("/patch/saved", [.int(-1), .string("mine")]),
            OSCTestMessage("/patch/deleted", [.int(-1)]),
            OSCTestMessage("/patch/current", [.int(0), .string("Transparent"), .int(0)]),
            OSCTestMessage("/profile/presets", [.string("default")]),
            OSCTestMessage("/session", [.string("active"), .string("fine_tuning"), .int(3)]),
            OSCTestMessage("/session/interrupted", [.int(1)]),
            OSCTestMessage("/state", [.string("/filter/cutoff"), .string("applied"), .float(5000)]),
            OSCTestMessage("/status", [.string("connected"), .int(1)]),
            OSCTestMessage("/config/delivery", [.string("continuous"), .float(0)]),
            OSCTestMessage("/config/delivery", [.string("discrete"), .float(0.2), .string("seconds")]),
            OSCTestMessage("/config/timeout", [.float(10), .string("seconds")]),
            OSCTestMessage("/config/max_output", [.float(100), .string("dB SPL")]),
            OSCTestMessage("/subscribe/pending", [.string("osc.udp://127.0.0.2:9/"), .string("native"), .int(30)]),
            OSCTestMessage("/subscribe/challenge", [.string("0123456789abcdef0123456789abcdef")]),
        ]

        @Test("Replies are never answered; requests in the same bundle still are")
        func repliesAreNotAnswered() throws {
            try Rig.run(.process(channels: 1)) { rig in
                for reply in Self.replies {
                    rig.osc.sendRaw(OSCWire.encode(reply))
                }
                // Every answer to them would arrive before /synced.
                let answers = try rig.osc.sync()
                #expect(answers.isEmpty, "replies were answered: \(answers.prefix(5))")

                rig.osc.sendRaw(OSCWire.encodeBundle(Self.replies + [OSCTestMessage("/ping", [.int(42)])]))
                let bundleAnswers = try rig.osc.sync()
                #expect(bundleAnswers.map(\.address) == ["/pong"], "\(bundleAnswers.prefix(5))")
                #expect(try rig.osc.query("/filter/cutoff") == .float(1000))
                #expect(try rig.osc.status()["subscribers"] == .int(0))
            }
        }

        @Test("/subscribe of SoundFit's own port is refused, and nothing loops")
        func subscribeOwnPort() throws {
            try Rig.run(.process(channels: 1)) { rig in
                let port = rig.ready.oscPort
                for url in ["osc.udp://127.0.0.1:\(port)", "osc.udp://localhost:\(port)/"] {
                    let reply = try rig.osc.ask("/subscribe", [.string(url)], reply: "/subscribed")
                    expectErrorReply(reply, for: "/subscribe", hint: "own OSC port")
                }
                #expect(try rig.osc.status()["subscribers"] == .int(0))
                let cpu = try cpuSeconds(of: rig.soundfit.process.pid, over: .seconds(2))
                report("soundfit CPU over 2 s after subscribing its own port", cpu, unit: "s")
                #expect(cpu < 0.6, "soundfit is busy (\(cpu) s of CPU in 2 s): a loop with itself?")
                try rig.osc.ping()
            }
        }

        @Test("A packet forged with SoundFit's own address and port as its source is dropped", .enabled(if: getuid() == 0))
        func forgedOwnSource() throws {
            try Rig.run(.process(channels: 1)) { rig in
                let port = rig.ready.oscPort
                try sendForged(OSCWire.encode(OSCTestMessage("/filter/cutoff", [.float(5000)])), fromPort: port, toPort: port)
                try sendForged(OSCWire.encode(OSCTestMessage("/no/such/address")), fromPort: port, toPort: port)
                try sendForged(OSCWire.encode(OSCTestMessage("/subscribe")), fromPort: port, toPort: port)
                // Control: the same forgery from another port is handled, so the forging works.
                try sendForged(OSCWire.encode(OSCTestMessage("/filter/q", [.float(3)])), fromPort: 9, toPort: port)
                let cpu = try cpuSeconds(of: rig.soundfit.process.pid, over: .seconds(2))
                report("soundfit CPU over 2 s after packets forged from its own port", cpu, unit: "s")
                #expect(cpu < 0.6, "soundfit is busy (\(cpu) s of CPU in 2 s): a loop with itself?")
                #expect(try rig.osc.query("/filter/cutoff") == .float(1000), "a packet forged from SoundFit's own port was applied")
                #expect(try rig.osc.query("/filter/q") == .float(3), "the control forgery did not arrive: the test forges nothing")
                #expect(try rig.osc.status()["subscribers"] == .int(0))
            }
        }

        @Test("Two instances: one subscribed to the other's port does not start an endless exchange")
        func twoInstances() throws {
            try Rig.run(.process(channels: 1)) { rig in
                let other = try SoundFitProcess(arguments: ["--server", rig.server.name, "--no-start-server", "--channels", "1",
                                                             "--name", "soundfit-b"])
                defer { other.stop() }
                let otherReady = try other.waitForReady()
                let otherClient = try OSCTestClient(port: otherReady.oscPort)
                // A's values differ from B's, so a snapshot or feedback reaching B would show.
                expectApplied(try rig.osc.set("/filter/cutoff", .float(3333)), "/filter/cutoff", .float(3333))
                expectApplied(try rig.osc.set("/output/gain", .float(-9)), "/output/gain", .float(-9))
                let reply = try rig.osc.ask("/subscribe", [.string("osc.udp://127.0.0.1:\(otherReady.oscPort)")],
                                            reply: "/subscribe/pending")
                #expect(reply.address == "/subscribe/pending", "B must confirm first, and never does: \(reply)")
                expectApplied(try rig.osc.set("/filter/q", .float(4)), "/filter/q", .float(4))
                let (first, second) = try cpuSeconds(of: rig.soundfit.process.pid, and: other.process.pid, over: .seconds(2))
                report("CPU over 2 s of the subscribing instance", first, unit: "s")
                report("CPU over 2 s of the subscribed instance", second, unit: "s")
                #expect(first < 0.6 && second < 0.6, "an instance is busy (\(first) s, \(second) s of CPU in 2 s): a loop?")
                try rig.osc.ping()
                // B kept its own values: A sent it nothing but the challenge.
                #expect(try otherClient.query("/filter/cutoff") == .float(1000))
                #expect(try otherClient.query("/output/gain") == .float(0))
                #expect(try otherClient.query("/filter/q") == .float(0.7071))
            }
        }
    }
}

/// CPU seconds (user + system) a process used during `duration`, from `/proc/PID/stat`.
func cpuSeconds(of pid: pid_t, over duration: Duration) throws -> Double {
    try cpuSeconds(of: [pid], over: duration)[0]
}

/// CPU seconds two processes used during the same `duration`.
func cpuSeconds(of first: pid_t, and second: pid_t, over duration: Duration) throws -> (Double, Double) {
    let used = try cpuSeconds(of: [first, second], over: duration)
    return (used[0], used[1])
}

/// CPU seconds each of `pids` used during the same `duration`.
private func cpuSeconds(of pids: [pid_t], over duration: Duration) throws -> [Double] {
    let before = try pids.map { try cpuSeconds(of: $0) }
    // The CPU used over a span of time is the measured quantity: no event ends it.
    Thread.sleep(forTimeInterval: Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18)
    return try zip(pids, before).map { try cpuSeconds(of: $0) - $1 }
}

/// Total CPU seconds a process has used so far.
func cpuSeconds(of pid: pid_t) throws -> Double {
    let text = try String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8)
    // Fields after the parenthesised command name; utime and stime are fields 14 and 15.
    guard let close = text.lastIndex(of: ")") else { throw IntegrationError("unreadable /proc/\(pid)/stat") }
    let fields = text[text.index(after: close)...].split(separator: " ")
    guard fields.count > 13, let user = Double(fields[11]), let system = Double(fields[12]) else {
        throw IntegrationError("unreadable /proc/\(pid)/stat: \(text)")
    }
    return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
}

/// Sends a UDP datagram to 127.0.0.1:`toPort` whose source claims to be 127.0.0.1:`fromPort`,
/// through a raw socket (root only): the kernel writes the IP header, we write the UDP header.
func sendForged(_ payload: [UInt8], fromPort: UInt16, toPort: UInt16) throws {
    let fd = socket(AF_INET, Int32(SOCK_RAW.rawValue), Int32(IPPROTO_UDP))
    guard fd >= 0 else { throw IntegrationError("raw socket: \(String(cString: strerror(errno)))") }
    defer { close(fd) }
    let length = UInt16(8 + payload.count)
    // UDP header: source port, destination port, length, checksum 0 (none, allowed over IPv4).
    var datagram = OSCWire.bigEndian(fromPort) + OSCWire.bigEndian(toPort) + OSCWire.bigEndian(length) + [0, 0]
    datagram += payload
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
    let sent = datagram.withUnsafeBytes { raw in
        withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                sendto(fd, raw.baseAddress, raw.count, 0, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
    }
    guard sent == datagram.count else { throw IntegrationError("raw send: \(String(cString: strerror(errno)))") }
}
