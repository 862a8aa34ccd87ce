import OSCCore
import OSCTestSupport
import SoundFitModel
@testable import SoundFitOSC
import SoundFitTestSupport
import Testing

/// A bounded, seeded fuzzing run of the whole dispatcher on the in-memory surface over a real
/// runtime: random and mutated packets with every type tag, bundles (nested, cut), address
/// patterns, and the real addresses of the model and the command table. Nothing crashes, and
/// every packet is answered or dropped as docs/OSC.md says: an undecodable packet and an empty
/// bundle get exactly one `/error`; a packet of replies only gets nothing; any other packet
/// gets at least one answer; a bundle with a rejected element gets exactly one, its `/error`.
@Suite struct DispatcherFuzzTests {
    static let packets = 10_000
    static let firstPeerPort: UInt16 = 20000

    static let replyAddresses = ["/error", "/pong", "/list/param", "/list/end", "/subscribed", "/unsubscribed",
                                 "/patch/item", "/patch/end", "/patch/saved", "/patch/deleted", "/profile/presets",
                                 "/session/interrupted", "/state", "/session", "/status", "/patch/current"]
    static let patterns = ["/filter/*", "/*/enabled", "/{filter,ringmod}/*", "/filter/[cq]*", "/filter/[!c]*",
                           "/*/*", "/*/*/normalized", "/filter/cut?ff", "/*", "/patch/*", "/session/*", "/filter/[",
                           "/x/{a", "/filter/[]", "/nothing/*", "/" + String(repeating: "*a", count: 30)]
    static let addresses = ParameterModel.all.map(\.address) + ParameterModel.all.map(\.normalizedAddress)
        + OSCControlSurface.commandAddresses + replyAddresses + patterns + ["/x", "/filter", "/filter/cutoff/x", "/"]
    static let strings = ["lowpass", "highpass", "peak", "fine_tuning", "single_preset", "continuous", "discrete", "both",
                          "left", "right", "default", "up", "none", "native", "normalized", "applied",
                          "osc.udp://127.0.0.1:9999", "osc.tcp://127.0.0.1:1", "/filter/cutoff", "/filter/*", "", "x",
                          "phone_call"]

    static func randomArgument(_ random: inout SeededRandom) -> OSCArgument {
        switch Int.random(in: 0..<9, using: &random) {
        case 0: .int32([0, 1, -1, 2, 3, 4, 7, 42, .max, .min, Int32.random(in: .min ... .max, using: &random)]
            .randomElement(using: &random)!)
        case 1: .int64([0, 1, -1, .max, .min].randomElement(using: &random)!)
        case 2: .float([0, 0.5, 1, 0.1, 2, 12, 22, 440, 1000, 5000, 20000, 20000.5, -1, -60, .nan, .infinity]
            .randomElement(using: &random)!)
        case 3: .double([0, 0.25, 1, 2500, 20000.000000001, -1e-300, 1e300, .nan].randomElement(using: &random)!)
        case 4, 5: .string(strings.randomElement(using: &random)!)
        case 6: .symbol(strings.randomElement(using: &random)!)
        case 7: .bool(Bool.random(using: &random))
        default: Bool.random(using: &random) ? .nil_ : .impulse
        }
    }

    /// A message to a real (or nearly real) address: encoded from random arguments, or the
    /// decoder fuzz's raw message with every type tag (blobs, timetags, chars, MIDI, colours,
    /// arrays) put at this address.
    static func randomMessage(_ random: inout SeededRandom) -> [UInt8] {
        let address = addresses.randomElement(using: &random)!
        if Bool.random(using: &random) {
            let arguments = (0..<Int.random(in: 0...3, using: &random)).map { _ in randomArgument(&random) }
            return OSCCodec.encode(OSCMessage(address, arguments))
        }
        let raw = OSCWirePackets.randomMessage(&random)
        let addressEnd = (raw.firstIndex(of: 0)! / 4 + 1) * 4
        var padded = Array(address.utf8) + [0]
        while padded.count % 4 != 0 { padded.append(0) }
        return padded + raw[addressEnd...]
    }

    static func randomPacket(_ random: inout SeededRandom, round: Int) -> [UInt8] {
        func mutated(_ packet: [UInt8]) -> [UInt8] {
            var packet = packet
            if Bool.random(using: &random) {
                for _ in 0..<Int.random(in: 1...3, using: &random) where !packet.isEmpty {
                    packet[Int.random(in: 0..<packet.count, using: &random)] ^= UInt8.random(in: 1...255, using: &random)
                }
            } else {
                packet = Array(packet.prefix(Int.random(in: 1...max(1, packet.count), using: &random)))
            }
            return packet
        }
        func bundle() -> [UInt8] {
            var elements = (0..<Int.random(in: 1...5, using: &random)).map { _ in randomMessage(&random) }
            if Int.random(in: 0..<4, using: &random) == 0 {
                elements.insert(OSCWirePackets.bundle([randomMessage(&random), randomMessage(&random)]), at: 0)
            }
            return OSCWirePackets.bundle(elements)
        }
        switch round % 6 {
        case 0, 1: return randomMessage(&random)
        case 2: return mutated(randomMessage(&random))
        case 3, 4: return bundle()
        default: return mutated(bundle())
        }
    }

    /// What docs/OSC.md promises for `packet`.
    enum Expected { case exactlyOneError, nothing, answered }

    static func expected(_ packet: [UInt8]) -> Expected {
        guard let decoded = try? OSCCodec.decode(packet) else { return .exactlyOneError }
        let messages = decoded.messages
        if messages.isEmpty { return .exactlyOneError }
        return messages.allSatisfy(OSCCommandTable.isReply) ? .nothing : .answered
    }

    @Test("10 000 random and mutated packets, bundles and patterns: no crash; each answered or dropped as documented")
    func fuzz() async throws {
        let surface = try await SurfaceHarness()
        defer { surface.stop() }
        var random = SeededRandom(seed: 0xD15_0A7C4)
        var expectations: [OSCPeer: (packet: [UInt8], expected: Expected)] = [:]
        let clock = ContinuousClock()
        let dispatching = clock.measure {
            for round in 0..<Self.packets {
                let packet = Self.randomPacket(&random, round: round)
                // Each packet from its own client (127.0.x.y): one source sending 10 000 packets
                // back to back would use up its share of the receive thread (`SourceWorkBudgets`).
                let peer = OSCPeer(host: "127.0.\(round / 250).\(round % 250 + 1)", port: Self.firstPeerPort + UInt16(round))!
                expectations[peer] = (packet, Self.expected(packet))
                surface.transport.receive(packet, from: peer)
            }
        }
        // Replies from tasks (/state, sessions, profiles) arrive later: read until every packet
        // that must be answered is, then a moment more for answers that must not come.
        var answers: [OSCPeer: [OSCMessage]] = [:]
        let mustAnswer = Set(expectations.filter { $0.value.expected != .nothing }.keys)
        let deadline = clock.now.advanced(by: SurfaceHarness.patience)
        var quietUntil: ContinuousClock.Instant?
        while clock.now < deadline {
            if let outbound = await surface.transport.nextOutbound(timeout: .milliseconds(50)) {
                if let message = outbound.message { answers[outbound.peer, default: []].append(message) }
                continue
            }
            if quietUntil == nil, mustAnswer.allSatisfy({ answers[$0] != nil }) {
                quietUntil = clock.now.advanced(by: .milliseconds(500))
            }
            if let quietUntil, clock.now >= quietUntil { break }
        }

        var counts: [String: Int] = [:]
        for (peer, (packet, expected)) in expectations {
            let received = answers[peer] ?? []
            switch expected {
            case .exactlyOneError:
                counts["one /error", default: 0] += 1
                #expect(received.count == 1 && received.first?.address == "/error", "\(packet): \(received)")
            case .nothing:
                counts["dropped (replies only)", default: 0] += 1
                #expect(received.isEmpty, "a packet of replies was answered: \(packet): \(received)")
            case .answered:
                counts["answered", default: 0] += 1
                #expect(!received.isEmpty, "no answer to \(packet)")
                let bundleRejection = received.contains {
                    $0.address == "/error" && $0.arguments.count == 2 && $0.arguments[1].isBundleRejection
                }
                if bundleRejection {
                    counts["bundles rejected whole", default: 0] += 1
                    #expect(received.count == 1, "a rejected bundle did more than answer its /error: \(received)")
                }
            }
        }
        print("measured: dispatcher fuzz: \(Self.packets) packets dispatched in \(dispatching), "
            + "\(answers.values.map(\.count).reduce(0, +)) answers; \(counts.sorted { $0.key < $1.key })")
        #expect(counts["answered", default: 0] > Self.packets / 2 && counts["dropped (replies only)", default: 0] > 0
                && counts["bundles rejected whole", default: 0] > 100)
    }
}

private extension OSCArgument {
    var isBundleRejection: Bool {
        if case .string(let text) = self { return text.hasSuffix("nothing in the bundle was applied") }
        return false
    }
}
