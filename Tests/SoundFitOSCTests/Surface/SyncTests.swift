import OSCCore
import SoundFitModel
@testable import SoundFitOSC
import Testing

/// `/sync ,i id` → `/synced ,i id` once every earlier request of the same sender ended (through
/// the surface: in-memory transport, real runtime, a stand-in audio thread).
@Suite struct SyncTests {
    /// The terminal `/state` of `address` in `messages`, and its position.
    private static func terminalState(of address: String, in messages: [OSCMessage]) -> Int? {
        messages.firstIndex {
            $0.address == "/state" && $0.arguments.first == .string(address)
                && [.string("applied"), .string("failed"), .string("superseded")].contains($0.arguments[1])
        }
    }

    @Test func withNothingUnderWayItIsAnsweredAtOnce() async throws {
        try await withSurface { surface in
            surface.send(OSCMessage("/sync", [.int32(41)]))
            #expect(await surface.next() == OSCMessage("/synced", [.int32(41)]))
        }
    }

    /// The sets' terminal states are sent from tasks, after the packets were handled: without
    /// the wait, `/synced` would come first.
    @Test func itComesAfterTheTerminalStateOfEveryEarlierSet() async throws {
        try await withSurface { surface in
            surface.send(OSCMessage("/output/gain", [.float(-6)]))
            surface.send(OSCMessage("/filter/cutoff", [.float(2000)]))
            surface.send(OSCMessage("/processing/intensity", [.float(0.7)]))
            surface.send(OSCMessage("/sync", [.int32(1)]))
            let messages = await surface.messages(through: "/synced")
            #expect(messages.last == OSCMessage("/synced", [.int32(1)]), "\(messages)")
            for address in ["/output/gain", "/filter/cutoff", "/processing/intensity"] {
                #expect(Self.terminalState(of: address, in: messages) != nil, "\(address) not ended before /synced: \(messages)")
            }
        }
    }

    @Test func inABundleItWaitsForTheSetsBeforeIt() async throws {
        try await withSurface { surface in
            surface.sendBundle([OSCMessage("/output/gain", [.float(-3)]), OSCMessage("/sync", [.int32(2)])])
            let messages = await surface.messages(through: "/synced")
            #expect(Self.terminalState(of: "/output/gain", in: messages) != nil, "\(messages)")
        }
    }

    @Test func aTimedChangeEndsWhenItApplies() async throws {
        try await withSurface { surface in
            let start = EngineTime.now
            surface.sendBundle([OSCMessage("/output/gain", [.float(-9)])], timetag: OSCTimetag.ahead(0.3))
            surface.send(OSCMessage("/sync", [.int32(3)]))
            let messages = await surface.messages(through: "/synced")
            #expect(EngineTime.now.seconds(since: start) >= 0.29, "/synced before the timed change applied")
            let applied = try #require(Self.terminalState(of: "/output/gain", in: messages), "\(messages)")
            #expect(messages[applied].arguments[1] == .string("applied"))
        }
    }

    /// Subscriber feedback is flushed by its own task a few milliseconds after it is queued:
    /// without waiting for that flush, `/synced` would overtake what other subscribers are sent,
    /// and a client could not tell that another socket got nothing.
    @Test func itComesAfterTheFeedbackToOtherSubscribers() async throws {
        try await withSurface { surface in
            let subscriber = OSCPeer(host: "127.0.0.1", port: 9002)!
            surface.send(OSCMessage("/subscribe"), from: subscriber)
            _ = await surface.messages(to: subscriber, through: "/subscribed")
            _ = await surface.everything(to: subscriber, within: .zero)  // the snapshot
            surface.send(OSCMessage("/output/gain", [.float(-6)]))
            surface.send(OSCMessage("/sync", [.int32(5)]))
            _ = await surface.messages(through: "/synced")
            let sentBefore = await surface.everything(to: subscriber, within: .zero)
            #expect(Self.terminalState(of: "/output/gain", in: sentBefore) != nil,
                    "the subscriber's feedback was not sent before /synced: \(sentBefore)")
        }
    }

    /// Another client's `/sync` does not wait for this one's requests.
    @Test func itWaitsOnlyForItsOwnSender() async throws {
        try await withSurface { surface in
            let other = OSCPeer(host: "127.0.0.1", port: 9001)!
            surface.sendBundle([OSCMessage("/output/gain", [.float(-9)])], timetag: OSCTimetag.ahead(1))
            surface.send(OSCMessage("/sync", [.int32(4)]), from: other)
            let start = EngineTime.now
            #expect(await surface.next(to: other) == OSCMessage("/synced", [.int32(4)]))
            #expect(EngineTime.now.seconds(since: start) < 0.9, "the other sender's /sync waited for the timed change")
        }
    }

    /// At most `maximumWaitingSyncs` wait per sender; the one beyond is refused, the others
    /// are all answered, in order, once the change under way ends.
    @Test func waitingSyncsAreBounded() async throws {
        try await withSurface { surface in
            surface.sendBundle([OSCMessage("/output/gain", [.float(-9)])], timetag: OSCTimetag.ahead(0.5))
            let count = PendingRequests.maximumWaitingSyncs
            for id in 0...count { surface.send(OSCMessage("/sync", [.int32(Int32(id))])) }
            var synced: [Int32] = []
            var errors: [OSCMessage] = []
            while synced.count < count, let message = await surface.next() {
                if message.address == "/synced", case .int32(let id) = message.arguments.first { synced.append(id) }
                if message.address == "/error" { errors.append(message) }
            }
            #expect(synced == Array(0..<Int32(count)))
            #expect(errors.count == 1 && errors.first?.arguments.first == .string("/sync"), "\(errors)")
        }
    }

    @Test func malformedRequestsAreAnsweredWithAnError() async throws {
        try await withSurface { surface in
            for message in [OSCMessage("/sync"), OSCMessage("/sync", [.string("x")]),
                            OSCMessage("/sync", [.int32(1), .int32(2)]), OSCMessage("/sync", [.float(1)])] {
                surface.send(message)
                let answer = try #require(await surface.next())
                #expect(answer.address == "/error" && answer.arguments.first == .string("/sync"), "\(message) → \(answer)")
            }
        }
    }
}
