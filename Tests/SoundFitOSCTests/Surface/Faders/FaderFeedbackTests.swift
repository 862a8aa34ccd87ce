import OSCCore
import SoundFitModel
@testable import SoundFitOSC
import Testing

/// A fader that sent a position is kept where the parameter is: a position that snapped to a
/// step is answered with that step's position, a rejected move with the current position.
@Suite struct FaderFeedbackTests {
    /// The position of the current `/filter/cutoff` (1000 Hz on its logarithmic fader).
    private static let cutoffAt1000 = FaderTaper.normalized(.float(1000), for: ParameterModel.filterCutoff)

    @Test("/filter/type/normalized 0.3 selects bandpass and the sender's fader snaps to 2/7")
    func aSnappedPositionIsFedBackToTheSender() async throws {
        try await withSurface { surface in
            surface.send(OSCMessage("/filter/type/normalized", [.float(0.3)]))
            let states = await surface.states()
            #expect(states.last == OSCMessage("/state", [.string("/filter/type"), .string("applied"), .string("bandpass")]),
                    "\(states)")
            #expect(await surface.next() == OSCMessage("/filter/type/normalized", [.float(Float(2.0 / 7.0))]))
            // A position that is the step already is not echoed.
            surface.send(OSCMessage("/filter/type/normalized", [.float(0)]))
            _ = await surface.states()
            let after = await surface.everything(within: .milliseconds(300))
            #expect(!after.contains { $0.address == "/filter/type/normalized" }, "\(after)")
        }
    }

    @Test("A continuous fader is not echoed: its value is where it was left")
    func aContinuousFaderIsNotEchoed() async throws {
        try await withSurface { surface in
            surface.send(OSCMessage("/filter/cutoff/normalized", [.float(0.5)]))
            let states = await surface.states()
            #expect(states.last?.arguments[1] == .string("applied"), "\(states)")
            let after = await surface.everything(within: .milliseconds(300))
            #expect(!after.contains { $0.address == "/filter/cutoff/normalized" }, "\(after)")
        }
    }

    @Test("An out-of-range fader gets its /error, then the current position to jump back to; nothing changes")
    func aRejectedFaderSnapsBack() async throws {
        try await withSurface { surface in
            surface.send(OSCMessage("/filter/cutoff/normalized", [.float(1.5)]))
            let error = await surface.next()
            #expect(error?.address == "/error" && error?.arguments.first == .string("/filter/cutoff/normalized"), "\(String(describing: error))")
            #expect(await surface.next() == OSCMessage("/filter/cutoff/normalized", [.float(Self.cutoffAt1000)]))
            #expect(surface.runtime.engine.settings.filter.cutoff == 1000)
            // A native out-of-range set is answered with the /error only.
            surface.send(OSCMessage("/filter/cutoff", [.float(5)]))
            #expect(await surface.next()?.address == "/error")
            let after = await surface.everything(within: .milliseconds(300))
            #expect(after.isEmpty, "\(after)")
        }
    }

    @Test("/subscribe ss \"\" normalized subscribes the sender itself, with fader positions")
    func anEmptyURLSubscribesTheSender() async throws {
        try await withSurface { surface in
            surface.send(OSCMessage("/subscribe", [.string(""), .string("normalized")]))
            let subscribed = await surface.next()
            #expect(subscribed?.address == "/subscribed" && subscribed?.arguments[1] == .string("normalized"),
                    "\(String(describing: subscribed))")
            let snapshot = await surface.messages(untilAll: [OSCMessage("/filter/cutoff/normalized", [.float(Self.cutoffAt1000)])])
            #expect(snapshot.contains(OSCMessage("/filter/cutoff/normalized", [.float(Self.cutoffAt1000)])), "\(snapshot)")
        }
    }
}
