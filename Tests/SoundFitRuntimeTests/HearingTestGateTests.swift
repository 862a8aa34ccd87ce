import Foundation
import SoundFitEngine
import SoundFitHearing
import SoundFitModel
import SoundFitRuntime
import SoundFitTestSupport
import Testing

/// The runner's gate, record and blind reports on the in-memory driver (`ListeningLoop`).
@Suite struct HearingTestGateTests {
    private func makeRuntime() throws -> SoundFitRuntime {
        SoundFitRuntime(engine: AudioEngine(), sessionConfiguration: .fineTuning(techLevel: try TechLevel(3)))
    }

    @Test func anIncompleteResultIsKeptNotAppliedAndRecordedPresentationByPresentation() async throws {
        let runtime = try makeRuntime()
        let loop = ListeningLoop(engine: runtime.engine, listener: .standard(left: "N2"))
        defer { loop.stop() }
        try await runtime.audioSystemConnected()
        let runner = HearingTestRunner(runtime: runtime)
        loop.runner.withLock { $0 = runner }
        try runner.setSettings(HearingTestSettings(timing: HearingTestRunnerTests.fast))
        let events = runner.events()
        await #expect(throws: ControlError.self) { try await runner.submitLast() }
        try await runner.start(ears: [.left], frequencies: [1000], listener: "P1", seed: 99)
        var states: [HearingTestState] = []
        for await event in events {
            if case .state(let state) = event {
                states.append(state)
                if !state.isActive { break }
            }
        }
        guard case .done(let refusal) = runner.state else {
            Issue.record("\(runner.state)")
            return
        }
        #expect(refusal?.contains("incomplete") == true, "\(String(describing: refusal))")
        #expect(runtime.presets.profile == nil, "an incomplete result became the profile")
        let last = try #require(runner.lastResult)
        #expect(!last.applied)
        let record = last.record
        #expect(record.seed == 99 && record.listener == "P1" && record.softwareVersion == SoundFitVersion.current)
        #expect(record.sampleRate == 48000)
        // One running report per presentation (after its window), none with a level.
        let running = states.filter { $0.name == "running" }
        #expect(running.count == record.presentations.count, "\(running.count) reports, \(record.presentations.count) presentations")
        for presentation in record.presentations where !presentation.isCatchTrial {
            let expected = 20 * log10(ToneCalibration(fullScaleSPL: runtime.calibration)
                .amplitude(hearingLevel: presentation.level!, frequency: presentation.frequency))
            #expect(abs(presentation.fullScaleLevel! - expected) < 1e-9)
            if let latency = presentation.latency { #expect(latency >= 0.05 && latency <= 0.4) }
        }
        #expect(record.presentations.contains { $0.heard })
        // Applying it anyway: the profile needs 500, 1000, 2000 and 4000 Hz, so it refuses, clearly.
        await #expect(throws: ControlError.self) { try await runner.submitLast() }
    }
}
