import OSCCore
import SoundFitEngine
@testable import SoundFitOSC
import Testing

/// "Rejected, never clamped" holds for doubles and ints too: a value is checked as it arrived,
/// before any conversion could round it into the range.
@Suite struct RangeAsReceivedTests {
    private func expectRejected(_ message: OSCMessage, _ hint: String, on surface: SurfaceHarness,
                                sourceLocation: SourceLocation = #_sourceLocation) async {
        surface.send(message)
        let reply = await surface.next()
        #expect(reply?.address == "/error", "\(message): \(String(describing: reply))", sourceLocation: sourceLocation)
        if case .string(let text)? = reply?.arguments.last {
            #expect(text.contains(hint), "\(message): \(text)", sourceLocation: sourceLocation)
        }
    }

    @Test func numbersJustOutsideTheirRangeAreRejectedAsSent() async throws {
        let surface = try await SurfaceHarness()
        defer { surface.stop() }
        await expectRejected(OSCMessage("/filter/cutoff", [.double(20000.000000001)]), "20000.000000001", on: surface)
        await expectRejected(OSCMessage("/processing/intensity", [.double(-1e-300)]), "out of range", on: surface)
        await expectRejected(OSCMessage("/filter/cutoff", [.int64(Int64(Int32.max) + 5)]), "out of range", on: surface)
        await expectRejected(OSCMessage("/filter/cutoff/normalized", [.double(1.0000000001)]), "0…1", on: surface)
        // A rejected fader move is followed by the position to jump back to.
        #expect(await surface.next()?.address == "/filter/cutoff/normalized")
        await expectRejected(OSCMessage("/config/delivery", [.string("discrete"), .double(1e-9)]), "0.001", on: surface)
        #expect(surface.runtime.engine.settings.filter.cutoff == 1000, "a rejected value was applied")
        // Inside the range a double is converted and applied as before.
        surface.send(OSCMessage("/filter/cutoff", [.double(2500.25)]))
        #expect(await surface.states().last?.arguments.dropFirst().first == .string("applied"))
        surface.send(OSCMessage("/config/delivery", [.string("discrete"), .double(0.002)]))
        #expect(await surface.next() == OSCMessage("/config/delivery", [.string("discrete"), .float(0.002), .string("seconds")]))
    }
}
