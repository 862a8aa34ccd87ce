import Logging
import OSCCore
import SoundFitEngine
@testable import SoundFitOSC
import Testing

/// The surface driven through an in-memory transport against a real runtime: every assertion is
/// about what is sent on the wire, to whom.
@Suite struct OSCControlSurfaceTests {
    static let client = SurfaceHarness.client
    static let subscriber = OSCPeer(host: "127.0.0.1", port: 9001)!

    private static func stateName(_ report: OSCMessage) -> String? {
        guard report.arguments.count > 1, case .string(let name) = report.arguments[1] else { return nil }
        return name
    }

    @Test func pingIsAnsweredWithItsArguments() async throws {
        try await withSurface { surface in
            surface.send(OSCMessage("/ping", [.int32(42), .string("x")]))
            #expect(await surface.next() == OSCMessage("/pong", [.int32(42), .string("x")]))
        }
    }

    @Test func aQueryIsAnsweredWithTheCurrentValueInItsForm() async throws {
        try await withSurface { surface in
            surface.send(OSCMessage("/filter/cutoff"))
            #expect(await surface.next() == OSCMessage("/filter/cutoff", [.float(1000)]))
            surface.send(OSCMessage("/filter/enabled/normalized"))
            #expect(await surface.next() == OSCMessage("/filter/enabled/normalized", [.float(0)]))
        }
    }

    @Test func aSetIsAnsweredApplyingThenApplied() async throws {
        try await withSurface { surface in
            surface.send(OSCMessage("/filter/cutoff", [.float(2500), .int32(7)]))
            let states = await surface.states()
            #expect(states.map(Self.stateName) == Array(repeating: "applying", count: states.count - 1) + ["applied"],
                    "\(states)")
            #expect(states.first.map(Self.stateName) == "applying")
            for report in states {
                #expect(report.arguments.first == .string("/filter/cutoff") && report.arguments[2] == .float(2500))
                #expect(report.arguments.last == .int32(7), "the request id is echoed: \(report)")
            }
            #expect(surface.runtime.engine.settings.filter.cutoff == 2500)
            surface.send(OSCMessage("/filter/cutoff"))
            #expect(await surface.next() == OSCMessage("/filter/cutoff", [.float(2500)]))
        }
    }

    @Test func rejectedRequestsAreAnsweredWithAnError() async throws {
        try await withSurface { surface in
            surface.send(OSCMessage("/nothing"))
            #expect(await surface.next() == OSCMessage("/error", [.string("/nothing"), .string("unknown address /nothing")]))
            surface.send(OSCMessage("/filter/cutoff", [.float(5)]))
            let outOfRange = await surface.next()
            #expect(outOfRange?.address == "/error" && outOfRange?.arguments.first == .string("/filter/cutoff"))
            surface.send(OSCMessage("/processing/fitting", [.int32(2)]))
            let readOnly = await surface.next()
            #expect(readOnly?.address == "/error" && readOnly?.arguments.first == .string("/processing/fitting"))
            // At an address that is also a reply's, a malformed request is answered, not dropped.
            surface.send(OSCMessage("/session", [.int32(1)]))
            #expect(await surface.next()?.arguments.first == .string("/session"))
            surface.send(OSCMessage("/config/delivery", [.string("continuous"), .float(0.3)]))
            #expect(await surface.next()?.arguments.first == .string("/config/delivery"))
            surface.transport.receive([1, 2, 3, 4], from: Self.client)
            let undecodable = await surface.next()
            #expect(undecodable?.address == "/error" && undecodable?.arguments.first == .string(""), "\(String(describing: undecodable))")
            #expect(surface.runtime.engine.settings.filter.cutoff == 1000)
        }
    }

    @Test func repliesAreNeverAnswered() async throws {
        try await withSurface { surface in
            let replies = [
                OSCMessage("/error", [.string("/nothing"), .string("unknown address /nothing")]),
                OSCMessage("/pong", [.int32(7)]),
                OSCMessage("/subscribed", [.string("osc.udp://127.0.0.1:9/"), .string("native")]),
                OSCMessage("/session", [.string("active"), .string("fine_tuning"), .int32(3)]),
                OSCMessage("/state", [.string("/filter/cutoff"), .string("applied"), .float(5000)]),
                OSCMessage("/config/delivery", [.string("continuous"), .float(0)]),
                OSCMessage("/patch/current", [.int32(0), .string("Transparent"), .int32(0)]),
            ]
            for reply in replies { surface.send(reply) }
            surface.send(OSCMessage("/ping", [.int32(1)]))
            // Handling is synchronous: an answer to a reply would have been sent before the /pong.
            #expect(await surface.next() == OSCMessage("/pong", [.int32(1)]))
            #expect(await surface.everything(within: .milliseconds(50)).isEmpty)
        }
    }

    @Test func packetsFromTheSurfacesOwnEndpointAndOversizedOnesAreDropped() async throws {
        try await withSurface { surface in
            let own = surface.transport.endpoint
            surface.send(OSCMessage("/ping"), from: own)
            surface.send(OSCMessage("/filter/cutoff", [.float(5000)]), from: own)
            surface.send(OSCMessage("/nothing"), from: own)
            surface.transport.receive([UInt8](repeating: 0, count: OSCControlSurface.maximumPacketBytes + 4), from: Self.client)
            #expect(await surface.everything(to: own, within: .milliseconds(50)).isEmpty)
            surface.send(OSCMessage("/ping"))
            #expect(await surface.next() == OSCMessage("/pong"), "nothing answered the dropped packets")
            #expect(surface.runtime.engine.settings.filter.cutoff == 1000)
        }
    }

    @Test func subscribersGetFeedbackButNotOfTheirOwnChanges() async throws {
        try await withSurface { surface in
            surface.send(OSCMessage("/subscribe"), from: Self.subscriber)
            let snapshot = await surface.messages(to: Self.subscriber, through: "/session")
            #expect(snapshot.first == OSCMessage("/subscribed", [.string("osc.udp://127.0.0.1:9001/"), .string("native"), .int32(90)]))
            #expect(snapshot.contains(OSCMessage("/filter/cutoff", [.float(1000)])), "\(snapshot)")
            #expect(snapshot.last == OSCMessage("/session", [.string("active"), .string("fine_tuning"), .int32(3)]))

            // Another client's change: value feedback and its terminal state.
            surface.send(OSCMessage("/filter/cutoff", [.float(2500)]))
            #expect(await surface.states().last.map(Self.stateName) == "applied")
            let applied = OSCMessage("/state", [.string("/filter/cutoff"), .string("applied"), .float(2500)])
            let feedback = await surface.messages(to: Self.subscriber, untilAll: [OSCMessage("/filter/cutoff", [.float(2500)]), applied])
            #expect(feedback.contains(OSCMessage("/filter/cutoff", [.float(2500)])), "\(feedback)")
            #expect(feedback.contains(applied), "\(feedback)")

            // The subscriber's own change: its /state reports, no echo.
            surface.send(OSCMessage("/filter/q", [.float(3)]), from: Self.subscriber)
            #expect(await surface.states(to: Self.subscriber).last.map(Self.stateName) == "applied")
            let afterwards = await surface.everything(to: Self.subscriber, within: .milliseconds(100))
            #expect(!afterwards.contains { $0.address == "/filter/q" || $0.address == "/state" }, "echoed: \(afterwards)")
        }
    }

    @Test func subscribingTheSurfacesOwnEndpointIsRefused() async throws {
        try await withSurface { surface in
            let own = surface.transport.endpoint
            surface.send(OSCMessage("/subscribe", [.string("osc.udp://\(own.host):\(own.port)")]))
            let reply = await surface.next()
            #expect(reply?.address == "/error" && reply?.arguments.first == .string("/subscribe"), "\(String(describing: reply))")
            #expect(surface.surface.feedback.registry.subscribers.isEmpty)
        }
    }

    @Test func aBundleIsAnsweredAndItsChangesAreRequestedTogether() async throws {
        try await withSurface { surface in
            surface.sendBundle([
                OSCMessage("/filter/cutoff", [.float(3000)]),
                OSCMessage("/filter/q", [.float(2)]),
                OSCMessage("/pong"),
                OSCMessage("/ping", [.int32(5)]),
            ])
            // Commands are answered at once, the bundle's changes are requested together after.
            #expect(await surface.next() == OSCMessage("/pong", [.int32(5)]))
            var terminal: [String: String] = [:]
            while terminal.count < 2, let report = await surface.next() {
                guard report.address == "/state", case .string(let address) = report.arguments[0],
                      let name = Self.stateName(report), name != "applying" else { continue }
                terminal[address] = name
            }
            #expect(terminal == ["/filter/cutoff": "applied", "/filter/q": "applied"])
            #expect(surface.runtime.engine.settings.filter.cutoff == 3000 && surface.runtime.engine.settings.filter.q == 2)
        }
    }

    @Test func statusReportsTheHostsFieldsAndTheSurfaces() async throws {
        try await withSurface { surface in
            surface.send(OSCMessage("/status"))
            let status = await surface.next()
            #expect(status?.address == "/status")
            let arguments = status?.arguments ?? []
            #expect(arguments.starts(with: [.string("connected"), .int32(1), .string("session"), .string("active"),
                                            .string("subscribers"), .int32(0)]), "\(arguments)")
            #expect(arguments.suffix(2) == [.string("version"), .string(OSCControlSurface.version)])
        }
    }
}

extension OSCControlSurfaceTests {
    /// An owner (a service group) runs the surface with `run()` and stops it by cancelling.
    @Test func runEndsWhenCancelled() async throws {
        let harness = try await SurfaceHarness()
        defer { harness.stop() }
        let transport = InMemoryOSCTransport()
        let surface = OSCControlSurface(runtime: harness.runtime, transport: transport, logger: .init(label: "test")) {
            SurfaceStatus(fields: [])
        }
        let running = Task { await surface.run() }
        while !transport.isReceiving { try await Task.sleep(for: .milliseconds(1)) }
        transport.receive(OSCMessage("/ping"), from: Self.client)
        #expect(await transport.nextOutbound()?.message == OSCMessage("/pong"))
        running.cancel()
        await running.value
    }
}

extension OSCControlSurfaceTests {
    /// A request that arrived over another transport (TCP, WebSocket) is answered over that one,
    /// its asynchronous reports too.
    @Test func repliesGoBackOverTheTransportTheRequestCameFrom() async throws {
        try await withSurface { surface in
            let other = InMemoryOSCTransport(endpoint: OSCPeer(host: "127.0.0.1", port: 7701)!)
            let sender = OSCSender(peer: Self.client, transport: other)
            surface.surface.receive(OSCCodec.encode(OSCMessage("/ping")), from: sender)
            surface.surface.receive(OSCCodec.encode(OSCMessage("/filter/q", [.float(2)])), from: sender)
            #expect(await other.nextOutbound()?.message == OSCMessage("/pong"))
            var last: OSCMessage?
            while let report = await other.nextOutbound(timeout: SurfaceHarness.patience)?.message {
                last = report
                if Self.stateName(report) != "applying" { break }
            }
            #expect(last.map(Self.stateName) == "applied", "\(String(describing: last))")
            #expect(await surface.everything(within: .milliseconds(20)).isEmpty, "nothing went out over the UDP-side transport")
        }
    }
}

extension OSCControlSurfaceTests {
    /// A client that subscribes itself over another transport gets its feedback over that
    /// transport; an `osc.udp://` URL it subscribes gets it over the datagram transport.
    @Test func feedbackGoesOverTheTransportOfTheSubscription() async throws {
        try await withSurface { surface in
            let other = InMemoryOSCTransport(endpoint: OSCPeer(host: "127.0.0.1", port: 7701)!)
            let streamClient = OSCPeer(host: "127.0.0.1", port: 9100)!
            let sender = OSCSender(peer: streamClient, transport: other)
            surface.surface.receive(OSCCodec.encode(OSCMessage("/subscribe")), from: sender)
            surface.surface.receive(OSCCodec.encode(OSCMessage("/subscribe", [.string("osc.udp://127.0.0.1:9001")])),
                                    from: sender)
            var overOther: [OSCMessage] = []
            while overOther.filter({ $0.address == "/session" }).isEmpty,
                  let packet = await other.nextOutbound(timeout: SurfaceHarness.patience) {
                overOther.append(try #require(packet.message))
            }
            #expect(overOther.first == OSCMessage("/subscribed", [.string("osc.udp://127.0.0.1:9100/"), .string("native"), .int32(90)]))
            // The URL is not the requester's own: it gets a challenge first, and confirms it.
            let challenge = try #require(await surface.next(to: Self.subscriber))
            #expect(challenge.address == "/subscribe/challenge", "\(challenge)")
            surface.send(OSCMessage("/subscribe/confirm", challenge.arguments), from: Self.subscriber)
            let udpSnapshot = await surface.messages(to: Self.subscriber, through: "/session")
            #expect(udpSnapshot.first?.address == "/subscribed", "\(udpSnapshot)")

            surface.send(OSCMessage("/filter/cutoff", [.float(4000)]))
            #expect(await surface.states().last.map(Self.stateName) == "applied")
            #expect(await surface.messages(to: Self.subscriber, untilAll: [OSCMessage("/filter/cutoff", [.float(4000)])]).contains(
                OSCMessage("/filter/cutoff", [.float(4000)])))
            var feedback: [OSCMessage] = []
            while !(feedback.contains(where: { $0.address == "/state" }) && feedback.contains(OSCMessage("/filter/cutoff", [.float(4000)]))),
                  let packet = await other.nextOutbound(timeout: SurfaceHarness.patience) {
                if packet.peer == streamClient, let message = packet.message { feedback.append(message) }
            }
            #expect(feedback.contains(OSCMessage("/filter/cutoff", [.float(4000)])), "\(feedback)")
            #expect(await surface.everything(to: streamClient, within: .milliseconds(20)).isEmpty,
                    "nothing for the stream client went out over the datagram transport")
        }
    }
}
