import OSCCore
import SoundFitOSC
import Testing

/// `/config/applicators` lists the session parameters' applicators with their own apply
/// timeouts, and one that exceeds its timeout fails the change, naming it.
@Suite(.timeLimit(.minutes(2))) struct ApplicatorsCommandTests {
    @Test func theSessionsApplicatorsAreListedWithTheirApplyTimeouts() async throws {
        let surface = try await SurfaceHarness()
        defer { surface.stop() }
        surface.send(OSCMessage("/config/applicators"))
        let messages = await surface.messages(through: "/config/applicators/end")
        let engine = OSCArgument.string("the audio engine"), seconds = OSCArgument.string("seconds")
        #expect(messages == [
            OSCMessage("/config/applicator", [.string("/processing/enabled"), engine, .float(3), seconds]),
            OSCMessage("/config/applicator", [.string("/processing/intensity"), engine, .float(3), seconds]),
            OSCMessage("/config/applicator", [.string("/processing/preset"), engine, .float(6), seconds]),
            OSCMessage("/config/applicators/end", [.int32(3)]),
        ])
        surface.send(OSCMessage("/config/applicators", [.string("/processing/enabled")]))
        let refused = await surface.next()
        #expect(refused == OSCMessage("/error", [.string("/config/applicators"), .string("/config/applicators takes no arguments")]))
    }

    @Test func aStalledEngineFailsASessionChangeAtItsApplyTimeoutNamingIt() async throws {
        let surface = try await SurfaceHarness()  // delivery timeout 20 s
        defer { surface.stop() }
        surface.stallAudio()
        let start = ContinuousClock.now
        surface.send(OSCMessage("/processing/intensity", [.float(0.8), .int32(5)]))
        let states = await surface.states()
        let elapsed = ContinuousClock.now - start
        let terminal = try #require(states.last)
        #expect(terminal.arguments.count == 5 && terminal.arguments[1] == .string("failed"), "\(states)")
        #expect(terminal.arguments[3] == .string("the audio engine did not apply the value within its apply timeout (3.0 seconds)"),
                "\(terminal)")
        #expect(elapsed >= .milliseconds(2900) && elapsed < .seconds(15), "failed after \(elapsed)")
        #expect(surface.runtime.controller.session?.intensity.value == 0.5)
    }
}
