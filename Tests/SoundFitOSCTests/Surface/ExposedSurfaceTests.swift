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
        let messages = await surface.everything(to: Self.display, within: .milliseconds(300))
        #expect(messages.map(\.address) == ["/subscribe/challenge", "/subscribe/pending"], "\(messages)")
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
        for _ in 0..<200 { surface.send(OSCMessage("/list"), from: victim) }
        let bytes = surface.transport.readAllOutbound().filter { $0.peer == victim }.reduce(0) { $0 + $1.packet.count }
        #expect(bytes <= SourceBudgets.defaultBurstBytes + 2048, "\(bytes) bytes")
        #expect(bytes >= SourceBudgets.defaultBurstBytes - 2048, "\(bytes) bytes")
        #expect(surface.surface.budgeted?.droppedCount ?? 0 > 0)
        // Another address has its own budget.
        surface.send(OSCMessage("/ping"), from: Self.display)
        #expect(await surface.next(to: Self.display)?.address == "/pong")
    }
}
