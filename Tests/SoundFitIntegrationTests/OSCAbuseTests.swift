import Foundation
import Glibc
import Synchronization
import Testing

extension SoundFitIntegration {
    /// The OSC surface's abuse cases, against the real binary
    /// over real sockets. A TCP peer is never its own UDP target; what a client can make SoundFit
    /// log is rate limited; on an exposed port an unconfirmed source gets at most 3× what it
    /// sent; a client sending costly packets cannot hold the receive thread from the others;
    /// doubles are range-checked as received; IPv6 is refused with a clear error.
    @Suite("OSC abuse") struct OSCAbuse {
        /// Lines SoundFit has written on stderr so far.
        private func lineCount(_ soundfit: SoundFitProcess) -> Int {
            soundfit.process.standardError.split(separator: "\n").count
        }

        @Test("A TCP peer bound to the port instance B owns on UDP is not B: /subscribe of B's URL awaits B's confirmation")
        func tcpPeerIsNotItsUDPNamesake() throws {
            try Rig.run(.process(channels: 1)) { rig in
                // B: a UDP listener (another instance, oscdump) on 127.0.0.1:P. The TCP client binds
                // its local port to P too (TCP and UDP ports are separate: no root needed).
                let instanceB = try OSCTestClient(port: rig.ready.oscPort)
                let tcp = try OSCTCPTestClient(port: try #require(rig.ready.oscTCPPort), localPort: instanceB.localPort)
                #expect(tcp.localPort == instanceB.localPort)
                tcp.send("/subscribe", .string(instanceB.url))
                let answer = try tcp.waitFor("/subscribe answer") { ["/subscribed", "/subscribe/pending", "/error"].contains($0.address) }
                #expect(answer.address == "/subscribe/pending", "\(answer)")
                // Another client's change: B would get it as feedback, and a snapshot before, if subscribed.
                expectApplied(try rig.osc.set("/filter/cutoff", .float(2500)), "/filter/cutoff", .float(2500))
                // /synced follows the change's terminal /state to every subscriber: had B been
                // subscribed, it would hold it (and the snapshot before it) now.
                try rig.osc.sync()
                let atB = instanceB.collect(for: .zero)
                #expect(atB.map(\.address) == ["/subscribe/challenge"], "B got more than the challenge: \(atB.prefix(4))")
                #expect(try rig.osc.status()["subscribers"]?.number == 0)

                // The TCP peer subscribes itself (over its connection), then names B's URL again: the
                // UDP endpoint is not re-routed onto its connection's subscription, nor the reverse.
                tcp.send("/subscribe")
                _ = try tcp.waitFor("/subscribed over TCP") { $0.address == "/subscribed" }
                try tcp.sync()  // the snapshot is sent before the /subscribe ends: /synced follows it
                tcp.send("/subscribe", .string(instanceB.url))
                let again = try tcp.waitFor("/subscribe answer") { ["/subscribed", "/subscribe/pending", "/error"].contains($0.address) }
                #expect(again.address == "/error" && again.string(1)?.contains("another transport") == true, "\(again)")
                expectApplied(try rig.osc.set("/filter/cutoff", .float(3000)), "/filter/cutoff", .float(3000))
                _ = try tcp.waitFor("feedback over TCP") { $0.address == "/filter/cutoff" && $0.arguments == [.float(3000)] }
                try rig.osc.sync()  // after the change's feedback to every subscriber, B included had it been one
                let laterAtB = instanceB.collect(for: .zero)
                #expect(laterAtB.isEmpty, "B got \(laterAtB.prefix(4))")
                #expect(try rig.osc.status()["subscribers"]?.number == 1)

                // B subscribes itself over UDP once the connection's subscription is gone; the TCP
                // peer cannot remove B's.
                tcp.send("/unsubscribe")
                _ = try tcp.waitFor("/unsubscribed") { $0.address == "/unsubscribed" }
                instanceB.send("/subscribe")
                _ = try instanceB.waitFor("B's /subscribed") { $0.address == "/subscribed" }
                tcp.send("/unsubscribe")
                let refusal = try tcp.waitFor("/unsubscribe answer") { $0.address == "/unsubscribed" || $0.address == "/error" }
                #expect(refusal.address == "/error" && refusal.string(1)?.contains("another transport") == true, "\(refusal)")
                #expect(try rig.osc.status()["subscribers"]?.number == 1)
                _ = try instanceB.sync()  // B's snapshot, sent before its /subscribe ended: read up to /synced
                expectApplied(try rig.osc.set("/filter/cutoff", .float(3500)), "/filter/cutoff", .float(3500))
                _ = try instanceB.waitFor("feedback to B") { $0.address == "/filter/cutoff" && $0.arguments == [.float(3500)] }
            }
        }

        @Test("Log growth is bounded: 100 000 undecodable datagrams and 3 000 MIDI program changes to a missing patch")
        func logFloodsAreRateLimited() throws {
            try Rig.run(.process(channels: 1)) { rig in
                let flooder = try OSCTestClient(port: rig.ready.oscPort, localAddress: loopbackAddress(2))
                let before = lineCount(rig.soundfit)
                let garbage: [UInt8] = Array("not osc at all".utf8)
                for index in 0..<100_000 {
                    flooder.sendRaw(garbage)
                    // Flow control: another client's /synced every 100 datagrams (one receive
                    // thread, arrival order) says the flood so far was read, so the socket buffer
                    // never fills and the kernel drops none of the 100 000.
                    if index % 100 == 99 { try rig.osc.sync() }
                }
                // The flood was handled before this /synced: its rate-limited /error answers are
                // all in the flooder's socket.
                try rig.osc.sync()
                let errors = flooder.collect(for: .zero).filter { $0.address == "/error" }
                // soundfit logged them before its /synced; the test reads its stderr on a thread of its own.
                _ = rig.soundfit.process.waitForOutput(timeout: .seconds(10), fromStandardError: true) {
                    $0.contains("undecodable OSC packet") ? true : nil
                }
                let afterOSC = lineCount(rig.soundfit)
                report("log lines for 100 000 undecodable datagrams", Double(afterOSC - before), unit: "lines")
                #expect(!errors.isEmpty, "undecodable datagrams were not answered")
                #expect(afterOSC - before <= 30, "\(afterOSC - before) lines: \(rig.soundfit.process.standardError.suffix(2000))")
                #expect(rig.soundfit.process.standardError.contains("undecodable OSC packet"), "the first ones are logged")

                let midi = try TestJackClient(server: rig.server.name, name: "sfmidi", roles: .midiSource)
                defer { midi.close() }
                try midi.connectMIDI(toSoundFit: rig.ready.client, osc: rig.osc)
                for _ in 0..<3000 { midi.programChange(channel: 1, program: 99) }
                try midi.waitUntilSent(timeout: .seconds(60))
                // Then one that loads factory patch 0: MIDI is handled in order and its reports
                // are logged from one stream, so its "loaded" line follows every refusal's. The
                // lines counted are those before it.
                midi.programChange(channel: 1, program: 0)
                try midi.waitUntilSent(timeout: .seconds(60))
                let loaded = "MIDI program change 0 on channel 1: loaded factory patch"
                _ = rig.soundfit.process.waitForOutput(timeout: .seconds(30), fromStandardError: true) { $0.contains(loaded) ? true : nil }
                let lines = rig.soundfit.process.standardError.split(separator: "\n")
                let loadedLine = lines.firstIndex(where: { $0.contains(loaded) })
                let afterMIDI = try #require(loadedLine, "the probe's patch was not loaded: \(lines.suffix(20))")
                report("log lines for 3 000 MIDI program changes to a missing patch", Double(afterMIDI - afterOSC), unit: "lines")
                #expect(rig.soundfit.process.standardError.contains("no factory patch 99"), "the first refusals are logged")
                #expect(afterMIDI - afterOSC <= 20, "\(afterMIDI - afterOSC) lines")
            }
        }

        @Test("Exposed port: an unconfirmed source gets at most 3× the bytes it sent, per command; confirmed or over TCP it gets its answers")
        func noAmplificationToUnconfirmedSources() throws {
            try Rig.run(.launched(channels: 1, arguments: ["--osc-host", "0.0.0.0"])) { rig in
                let port = try rig.soundfit.oscEndpoint().port
                let admin = try OSCTestClient(port: port)
                try admin.waitForSession()
                let requests: [(String, OSCTestMessage)] = [
                    ("/response ,i 1024", OSCTestMessage("/response", [.int(1024)])),
                    ("/meters/subscribe", OSCTestMessage("/meters/subscribe", [.float(30)])),
                    ("/list", OSCTestMessage("/list")),
                    ("/patch/list", OSCTestMessage("/patch/list")),
                    ("/status", OSCTestMessage("/status")),
                    ("/subscribe", OSCTestMessage("/subscribe")),
                    ("/filter/* query", OSCTestMessage("/filter/*")),
                    ("/ping", OSCTestMessage("/ping")),
                    ("/no/such/address", OSCTestMessage("/no/such/address")),
                ]
                // Each command from 10 forged sources (127.3.c.s stand for other hosts), 5 times each.
                for (index, (label, message)) in requests.enumerated() {
                    let packet = OSCWire.encode(message)
                    let sources = try (1...10).map {
                        try OSCTestClient(port: port, localAddress: 0x7F03_0000 | UInt32(index) << 8 | UInt32($0))
                    }
                    for source in sources { for _ in 0..<5 { source.sendRaw(packet) } }
                    try admin.ping()  // every request above was read before this one
                    var worst = 0.0
                    for source in sources {
                        // The budget refills with time (the meter stream runs on): the window is part of the measure.
                        let bytesOut = OSCTestClient.wireBytes(source.collect(for: .milliseconds(label == "/meters/subscribe" ? 1000 : 150)))
                        worst = max(worst, Double(bytesOut) / Double(5 * packet.count))
                    }
                    report("bytes out / bytes in, worst of 10 unconfirmed sources, \(label)", worst, unit: "x")
                    #expect(worst <= 3, "\(label): \(worst)× to an unconfirmed source")
                }
                let dropped = try #require(admin.status()["answers_dropped"]?.number)
                #expect(dropped > 0)

                // A source that confirms its address gets /list whole.
                let listener = try OSCTestClient(port: port, localAddress: 0x7F04_0001)
                listener.send("/source/confirm")
                let challenge = try listener.waitFor("/source/challenge") { $0.address == "/source/challenge" }
                #expect(challenge.before.isEmpty && OSCWire.encode(challenge.match).count <= 3 * OSCWire.encode(OSCTestMessage("/source/confirm")).count)
                listener.send("/source/confirm", .string(challenge.match.string(0) ?? ""))
                _ = try listener.waitFor("/source/confirmed") { $0.address == "/source/confirmed" }
                listener.send("/list")
                let listed = try listener.waitFor("/list/end after confirming") { $0.address == "/list/end" || $0.address == "/error" }
                #expect(listed.match.address == "/list/end" && listed.before.count > 10, "\(listed.match)")
                // Over TCP (a handshake proves the address) large answers need nothing more.
                let tcp = try OSCTCPTestClient(port: try rig.soundfit.oscTCPPort(), localAddress: 0x7F04_0002)
                tcp.send("/response", .int(256))
                let response = try tcp.waitFor("/response over TCP") { $0.address == "/response/left" || $0.address == "/error" }
                #expect(response.address == "/response/left", "\(response)")
            }
        }

        @Test("A client flooding heavy pattern bundles does not delay another client's 20 sets beyond 250 ms")
        func heavyClientDoesNotStarveOthers() throws {
            try Rig.run(.process(channels: 1)) { rig in
                // Another client on the same host (127.0.0.1, another port), as local clients are.
                let heavy = try OSCTestClient(port: rig.ready.oscPort)
                // Over the per-packet bound: refused whole, with one /error.
                heavy.sendBundle((0..<1023).map { _ in OSCTestMessage("/*/*") })
                let refused = try heavy.waitFor("refusal of 1 023 patterns") { $0.address == "/error" }
                #expect(refused.before.isEmpty && refused.match.string(1)?.contains("at most") == true, "\(refused.match)")

                // Within it: 32 patterns, each answering every parameter, sent faster than SoundFit answers them.
                let bundle = OSCWire.encodeBundle((0..<32).map { _ in OSCTestMessage("/*/*") })
                let flood = Flood()
                let thread = Thread {
                    while !flood.stop.load(ordering: .relaxed) {
                        heavy.sendRaw(bundle)
                        // Faster than SoundFit can answer them: a backlog builds in its socket buffer.
                        if flood.sent.add(1, ordering: .relaxed).newValue % 4 == 0 { Thread.sleep(forTimeInterval: 0.001) }
                    }
                }
                thread.start()
                defer { flood.stop.store(true, ordering: .relaxed) }
                // The backlog has built up once SoundFit throttles the heavy source, which it logs.
                let throttled = rig.soundfit.process.waitForOutput(timeout: .seconds(30), fromStandardError: true) {
                    $0.contains("over its share") ? true : nil
                }
                #expect(throttled == true, "the throttled source is not logged")
                let cpu = try cpuSeconds(of: rig.soundfit.process.pid, over: .seconds(1))
                var latencies: [Double] = []
                for index in 0..<20 {
                    let start = ContinuousClock.now
                    let reports = try rig.osc.set("/filter/cutoff", .float(Float(1000 + 50 * index)), timeout: .seconds(10))
                    let took = ContinuousClock.now - start
                    latencies.append(Double(took.components.seconds) + Double(took.components.attoseconds) / 1e18)
                    #expect(reports.last?.string(1) == "applied", "\(reports)")
                    // The next probe meets a new backlog: 40 more heavy bundles sent after this one ended.
                    let mark = flood.sent.load(ordering: .relaxed), deadline = ContinuousClock.now + .seconds(10)
                    while flood.sent.load(ordering: .relaxed) < mark + 40, ContinuousClock.now < deadline {
                        Thread.sleep(forTimeInterval: 0.001)  // polls a condition (with a deadline)
                    }
                }
                flood.stop.store(true, ordering: .relaxed)
                let worst = latencies.max() ?? 0
                report("SoundFit CPU while flooded", cpu, unit: "s/s")
                report("heavy bundles sent", Double(flood.sent.load(ordering: .relaxed)), unit: "bundles")
                report("worst set (request to applied) of another client under the flood", worst * 1000, unit: "ms")
                report("median set under the flood", latencies.sorted()[latencies.count / 2] * 1000, unit: "ms")
                #expect(worst < 0.25, "latencies \(latencies.map { Int($0 * 1000) }) ms")
            }
        }

        @Test("/meters/subscribe ,d 30.0000001 is refused, not rounded to 30; ,d 30 is accepted")
        func doublesAreCheckedBeforeRounding() throws {
            try Rig.run(.process(channels: 1)) { rig in
                expectErrorReply(try rig.osc.ask("/meters/subscribe", [.double(30.0000001)], reply: "/meters/subscribed"),
                                 for: "/meters/subscribe", hint: "rate")
                let accepted = try rig.osc.ask("/meters/subscribe", [.double(30)], reply: "/meters/subscribed")
                #expect(accepted.address == "/meters/subscribed" && accepted.arguments.first == .float(30), "\(accepted)")
                rig.osc.send("/meters/unsubscribe")
            }
        }

        @Test("--osc-host ::1 exits non-zero with a message saying IPv6 is not supported")
        func ipv6HostIsRefusedClearly() throws {
            let soundfit = try Rig.refusedStart(["--server", "no-such-server", "--no-start-server", "--osc-host", "::1"])
            defer { soundfit.stop() }
            #expect(soundfit.process.standardError.contains("IPv6"), "\(soundfit.process.standardError)")
        }
    }
}

/// The flood thread's stop flag and count of packets sent.
private final class Flood: Sendable {
    let stop = Atomic<Bool>(false)
    let sent = Atomic<Int>(0)
}

extension SoundFitProcess {
    /// The OSC over TCP port of the ready line, for any listening address.
    func oscTCPPort(timeout: Duration = .seconds(30)) throws -> UInt16 {
        let found = process.waitForOutput(timeout: timeout) { output -> UInt16? in
            guard let line = output.split(separator: "\n").first(where: { $0.hasPrefix("soundfit ready ") }),
                  let field = line.split(separator: " ").first(where: { $0.hasPrefix("osc_tcp=tcp://") }),
                  let colon = field.lastIndex(of: ":") else { return nil }
            return UInt16(field[field.index(after: colon)...])
        }
        guard let found else { throw IntegrationError("no OSC over TCP port in the ready line: \(process.standardOutput)") }
        return found
    }
}

extension OSCTestClient {
    /// Confirms this client's address on an exposed port (`/source/confirm`, then its token back).
    func confirmSource(timeout: Duration = .seconds(5)) throws {
        send("/source/confirm")
        let challenge = try waitFor("/source/challenge", timeout: timeout) { $0.address == "/source/challenge" || $0.address == "/source/confirmed" }
        guard challenge.match.address == "/source/challenge" else { return }
        send("/source/confirm", .string(challenge.match.string(0) ?? ""))
        _ = try waitFor("/source/confirmed", timeout: timeout) { $0.address == "/source/confirmed" }
    }
}
