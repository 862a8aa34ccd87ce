import SoundFitModel
import SoundFitDSP
import SoundFitEngine
import SoundFitTestSupport
import Testing

/// Preset hand-overs wait on the acknowledgement watcher, like parameter values.
@Suite struct PresetHandOverTests {
    @Test func withoutAudioCyclesAHandOverTimesOut() async throws {
        let engine = AudioEngine()
        await #expect(throws: EngineError.timeout(seconds: 0.05)) {
            try await engine.installPersonalization(nil, timeout: .milliseconds(50))
        }
    }

    @Test func aHandOverEndsWhenTheAudioThreadTookIt() async throws {
        let engine = AudioEngine()
        // A stand-in audio thread, rendering until the hand-over returned: a thread of its own,
        // as a real one is (a task could wait behind other tests' blocked tasks in the
        // cooperative pool past the timeout).
        let loop = RenderLoop(engine: engine)
        defer { loop.stop() }
        try await engine.installPersonalization(nil, timeout: .seconds(10))
    }
}
