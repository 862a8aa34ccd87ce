import OSCCore
import SoundFitModel
@testable import SoundFitOSC
import Testing

/// The surface's rules for a port that can be exposed, on the in-memory transport: third-party
/// subscriptions confirmed by their target, every non-loopback target confirming on an exposed
/// port, unreachable targets dropped, and each address's answers budgeted.
@Suite struct ExposedSurfaceTests {
    static let display = OSCPeer(host: "10.0.0.9", port: 9000)!

    /// The challenge's token, from the only message `peer` received.
    private func challengeToken(in messages: [OSCMessage]) -> String? {
        guard messages.count == 1, messages[0].address == "/subscribe/challenge",
              case .string(let token) = messages[0].arguments.first else { return nil }
        return token
    }

    @Test func aThirdPartyTargetGetsOnlyAChallengeUntilItConfirms() async throws {
        let surface = try await SurfaceHarness()
        defer { surface.stop() }
        let url = OSCArgument.string(Self.display.oscURL)
        for _ in 0..<5 { surface.send(OSCMessage("/subscribe", [url])) }
        for _ in 0..<5 {
            #expect(await surface.next()?.address == "/subscribe/pending")
        }
        surface.send(OSCMessage("/filter/cutoff", [.float(2000)]))
        _ = await surface.states()
        let before = await surface.everything(to: Self.display, within: .milliseconds(200))
        let token = try #require(challengeToken(in: before), "\(before)")
        #expect(surface.surface.feedback.registry.subscribers.isEmpty)

        surface.send(OSCMessage("/subscribe/confirm", [.string(token)]), from: OSCPeer(host: "10.0.0.9", port: 1234)!)
        let confirmed = await surface.messages(to: Self.display, through: "/session")
        #expect(confirmed.first == OSCMessage("/subscribed", [url, .string("native"), .int32(90)]))
        #expect(confirmed.contains(OSCMessage("/filter/cutoff", [.float(2000)])))
        #expect(surface.surface.feedback.registry.subscribers.map(\.owner) == [SurfaceHarness.client])
    }

    @Test func onAnExposedPortEveryTargetOutsideLoopbackConfirms() async throws {
        let surface = try await SurfaceHarness(exposure: .network)
        defer { surface.stop() }
        // A surface on the network subscribing itself: its source could be forged.
        surface.send(OSCMessage("/subscribe"), from: Self.display)
        // The challenge only: `/subscribe/pending` (60 bytes) is more than 3× the 12-byte request
        // of a source that has not confirmed its address; the challenge's number is bounded on its own.
        let messages = await surface.everything(to: Self.display, within: .milliseconds(300))
        #expect(messages.map(\.address) == ["/subscribe/challenge"], "\(messages)")
        let token = try #require(challengeToken(in: messages.filter { $0.address == "/subscribe/challenge" }))
        surface.send(OSCMessage("/subscribe/confirm", [.string(token)]), from: Self.display)
        #expect(await surface.messages(to: Self.display, through: "/session").first?.address == "/subscribed")
        // A loopback client needs no confirmation.
        surface.send(OSCMessage("/subscribe"))
        #expect(await surface.next()?.address == "/subscribed")
    }

    @Test func anUnreachableTargetIsDroppedAtOnce() async throws {
        let surface = try await SurfaceHarness()
        defer { surface.stop() }
        surface.send(OSCMessage("/subscribe"))
        _ = await surface.messages(through: "/session")
        #expect(surface.surface.feedback.registry.subscribers.count == 1)
        surface.transport.portUnreachable(SurfaceHarness.client)
        #expect(surface.surface.feedback.registry.subscribers.isEmpty)
    }

    @Test func anExposedPortBudgetsWhatEachAddressDraws() async throws {
        let surface = try await SurfaceHarness(exposure: .network)
        defer { surface.stop() }
        let victim = OSCPeer(host: "10.0.0.7", port: 5000)!
        // A confirmed address: the rate budget is what bounds it (an unconfirmed one is refused /list).
        surface.surface.budgeted?.confirm(victim.address)
        let start = ContinuousClock.now
        for _ in 0..<200 { surface.send(OSCMessage("/list"), from: victim) }
        let elapsed = (ContinuousClock.now - start) / .seconds(1)
        let bytes = surface.transport.readAllOutbound().filter { $0.peer == victim }.reduce(0) { $0 + $1.packet.count }
        // The burst, plus what the bucket refilled while the 200 requests were handled (on a
        // loaded machine that took 0.5 s once, 8 KiB more).
        let refilled = Int(Double(SourceBudgets.defaultBytesPerSecond) * elapsed)
        #expect(bytes <= SourceBudgets.defaultBurstBytes + refilled + 2048, "\(bytes) bytes in \(elapsed) s")
        #expect(bytes >= SourceBudgets.defaultBurstBytes - 2048, "\(bytes) bytes")
        #expect(surface.surface.budgeted?.droppedCount ?? 0 > 0)
        // Another address has its own budget.
        surface.send(OSCMessage("/ping"), from: Self.display)
        #expect(await surface.next(to: Self.display)?.address == "/pong")
    }

    /// What an unconfirmed source draws is at most 3× what it sent, per command;
    /// large answers need a confirmed address (`/source/confirm`).
    @Test func anUnconfirmedSourceDrawsAtMostThreeTimesWhatItSent() async throws {
        let surface = try await SurfaceHarness(exposure: .network)
        defer { surface.stop() }
        let forged = OSCPeer(host: "10.0.0.5", port: 7000)!
        let requests = [OSCMessage("/list"), OSCMessage("/status"), OSCMessage("/response", [.int32(1024)]),
                        OSCMessage("/meters/subscribe", [.float(30)]), OSCMessage("/subscribe"),
                        OSCMessage("/ping"), OSCMessage("/filter/cutoff"), OSCMessage("/no/such"),
                        OSCMessage("/personalization/gains")]
        var bytesIn = 0
        for request in requests {
            let packet = OSCCodec.encode(request)
            bytesIn += packet.count
            for _ in 0..<20 { surface.transport.receive(packet, from: forged) }
        }
        let out = await surface.everything(to: forged, within: .milliseconds(300))
        let bytesOut = out.reduce(0) { $0 + OSCCodec.encode($1).count }
        #expect(bytesOut <= 3 * 20 * bytesIn, "\(bytesOut) bytes out for \(20 * bytesIn) in")
        #expect(!out.contains { $0.address.hasPrefix("/list/") || $0.address == "/status" || $0.address.hasPrefix("/response/")
                || $0.address.hasPrefix("/personalization/gains") })

        // It confirms: /source/challenge (within 3× its request), the token back, then /list is answered.
        let ask = OSCCodec.encode(OSCMessage("/source/confirm"))
        let listener = OSCPeer(host: "10.0.0.6", port: 7000)!
        surface.transport.receive(ask, from: listener)
        let challenge = try #require(await surface.next(to: listener))
        #expect(challenge.address == "/source/challenge" && OSCCodec.encode(challenge).count <= 3 * ask.count, "\(challenge)")
        // The token is the address's: from another host it confirms nothing.
        surface.send(OSCMessage("/source/confirm", challenge.arguments), from: forged)
        #expect(surface.surface.budgeted?.isConfirmed(forged.address) == false)
        surface.send(OSCMessage("/source/confirm", challenge.arguments), from: OSCPeer(host: "10.0.0.6", port: 7001)!)
        #expect(await surface.next(to: OSCPeer(host: "10.0.0.6", port: 7001)!) == OSCMessage("/source/confirmed", [.string("10.0.0.6")]))
        surface.send(OSCMessage("/list"), from: listener)
        #expect(await surface.messages(to: listener, through: "/list/end").count > 10)
    }
}
