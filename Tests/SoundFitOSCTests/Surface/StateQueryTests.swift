import OSCCore
import SoundFitEngine
@testable import SoundFitOSC
import Testing

/// `/state ,s address` asks for a parameter's current update state; the reply has the report's form.
@Suite struct StateQueryTests {
    @Test func aParametersUpdateStateCanBeQueried() async throws {
        let surface = try await SurfaceHarness()
        defer { surface.stop() }
        surface.send(OSCMessage("/state", [.string("/filter/cutoff")]))
        #expect(await surface.next() == OSCMessage("/state", [.string("/filter/cutoff"), .string("applied"), .float(1000)]))
        surface.send(OSCMessage("/filter/cutoff", [.float(2500)]))
        #expect(await surface.states().last?.arguments.dropFirst().first == .string("applied"))
        surface.send(OSCMessage("/state", [.string("/filter/cutoff")]))
        #expect(await surface.next() == OSCMessage("/state", [.string("/filter/cutoff"), .string("applied"), .float(2500)]))
        surface.send(OSCMessage("/state", [.string("/no/such")]))
        #expect(await surface.next()?.address == "/error")
        // The reply form is never answered.
        surface.send(OSCMessage("/state", [.string("/filter/cutoff"), .string("applied"), .float(2500)]))
        surface.send(OSCMessage("/ping"))
        #expect(await surface.next() == OSCMessage("/pong"))
    }
}
