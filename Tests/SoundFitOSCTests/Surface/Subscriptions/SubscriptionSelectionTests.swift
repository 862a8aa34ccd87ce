import OSCCore
@testable import SoundFitOSC
import Testing

/// `/subscribe ,s address_pattern`: a subscription that follows a subtree of the parameters.
@Suite struct SubscriptionSelectionTests {
    static let subscriber = OSCPeer(host: "127.0.0.1", port: 9002)!

    @Test func aPatternRestrictsTheSnapshotAndTheFeedbackButNotNotifications() async throws {
        let surface = try await SurfaceHarness()
        defer { surface.stop() }
        surface.send(OSCMessage("/subscribe", [.string("/filter")]), from: Self.subscriber)
        let snapshot = await surface.messages(to: Self.subscriber, through: "/session")
        #expect(snapshot.first == OSCMessage("/subscribed", [.string("osc.udp://127.0.0.1:9002/"), .string("native"),
                                                            .int32(90), .string("/filter")]))
        let values = snapshot.dropFirst().dropLast().map(\.address)
        #expect(!values.isEmpty && values.allSatisfy { $0.hasPrefix("/filter/") }, "\(values)")
        #expect(values.contains("/filter/cutoff"))
        #expect(snapshot.last?.address == "/session")

        // A change outside the selection is not fed; one inside is, with its /state.
        surface.send(OSCMessage("/output/gain", [.float(-6)]))
        #expect(await surface.states().last.map { $0.arguments[1] } == .string("applied"))
        surface.send(OSCMessage("/filter/cutoff", [.float(2500)]))
        #expect(await surface.states().last.map { $0.arguments[1] } == .string("applied"))
        let applied = OSCMessage("/state", [.string("/filter/cutoff"), .string("applied"), .float(2500)])
        let feedback = await surface.messages(to: Self.subscriber,
                                              untilAll: [OSCMessage("/filter/cutoff", [.float(2500)]), applied])
        #expect(feedback.contains(applied), "\(feedback)")
        #expect(!feedback.contains { $0.address == "/output/gain" || $0.arguments.first == .string("/output/gain") },
                "fed a parameter outside the selection: \(feedback)")
        let later = await surface.everything(to: Self.subscriber, within: .milliseconds(100))
        #expect(!later.contains { $0.address == "/output/gain" || $0.arguments.first == .string("/output/gain") }, "\(later)")

        // Notifications still come.
        surface.send(OSCMessage("/session/interrupt", [.string("call")]))
        let notification = await surface.messages(to: Self.subscriber, through: "/session/interrupted")
        #expect(notification.last == OSCMessage("/session/interrupted", [.int32(1)]), "\(notification)")

        // Subscribing again without a pattern follows everything again.
        surface.send(OSCMessage("/subscribe"), from: Self.subscriber)
        let renewed = await surface.messages(to: Self.subscriber, through: "/session")
        #expect(renewed.contains(OSCMessage("/output/gain", [.float(-6)])), "\(renewed)")
    }

    @Test func badPatternsAndRepeatedArgumentsAreRejected() async throws {
        let surface = try await SurfaceHarness()
        defer { surface.stop() }
        for (arguments, reason) in [
            ([OSCArgument.string("/nothing/here")], "/subscribe: address pattern '/nothing/here': it selects no parameter"),
            ([.string("/filter/[cut")], "/subscribe: address pattern '/filter/[cut': malformed address pattern: '[' at position 8 is never closed"),
            ([.string("/filter"), .string("/output")],
             "/subscribe takes [,s url] [,s native|normalized|both] [,s address_pattern], each at most once, got ,ss"),
        ] {
            surface.send(OSCMessage("/subscribe", arguments))
            let reply = await surface.next()
            #expect(reply == OSCMessage("/error", [.string("/subscribe"), .string(reason)]), "\(arguments)")
        }
    }

    @Test func theSelectionIsResolvedLikeList() throws {
        let filter = try ParameterSelection("/filter/*")
        #expect(filter.contains("/filter/cutoff") && !filter.contains("/output/gain"))
        let twoKernels = try ParameterSelection("/{filter,output}")
        #expect(twoKernels.contains("/output/gain") && twoKernels.contains("/filter/q"))
        #expect(!twoKernels.contains("/processing/enabled"))
    }
}
