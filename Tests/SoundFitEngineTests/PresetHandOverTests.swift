import SoundFitModel
import SoundFitDSP
import SoundFitEngine
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
        // A stand-in audio thread, rendering until the hand-over returned.
        let rendering = Task.detached {
            var driver = InMemoryDriver(engine: engine)
            while !Task.isCancelled {
                driver.renderSilentCycle()
                try? await Task.sleep(for: .milliseconds(1))
            }
        }
        defer { rendering.cancel() }
        try await engine.installPersonalization(nil, timeout: .seconds(10))
    }
}
