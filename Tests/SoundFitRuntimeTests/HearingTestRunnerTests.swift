import Foundation
import SoundFitDSP
import SoundFitEngine
import SoundFitHearing
import SoundFitModel
import SoundFitRuntime
import SoundFitTestSupport
import Synchronization
import Testing

/// The hearing test runner on the in-memory driver: a stand-in audio thread renders the engine
/// in real time and a simulated listener listens to the rendered output (tone level → dB HL
/// through the calibration) and presses.
@Suite struct HearingTestRunnerTests {
    static let fast = TestTiming(toneSeconds: 0.2, windowStart: 0.05, windowEnd: 0.4, gapMinimum: 0.1, gapMaximum: 0.15)

    private func makeRuntime() throws -> SoundFitRuntime {
        SoundFitRuntime(engine: AudioEngine(), sessionConfiguration: .fineTuning(techLevel: try TechLevel(3)))
    }

    @Test func aTestNeedsASessionAndValidSettings() async throws {
        let runtime = try makeRuntime()
        let runner = HearingTestRunner(runtime: runtime)
        await #expect(throws: ControlError.self) { try await runner.start(ears: [.left]) }
        #expect(runner.state == .idle)
        #expect(throws: HearingTestSettingsError.self) {
            try runner.setSettings(HearingTestSettings(timing: TestTiming(toneSeconds: 0.1)))
        }
        #expect(throws: HearingTestSettingsError.self) {
            try runner.setSettings(HearingTestSettings(timing: TestTiming(windowStart: 0.5, windowEnd: 0.4)))
        }
        try runner.setSettings(HearingTestSettings(timing: Self.fast))
        #expect(runner.settings.timing == Self.fast)
        #expect(throws: ControlError.self) { try runner.heard() }
    }

    @Test func aListenerTakesTheTestAndTheResultBecomesTheProfile() async throws {
        let runtime = try makeRuntime()
        let loop = ListeningLoop(engine: runtime.engine, listener: .standard(left: "N2"))
        defer { loop.stop() }
        try await runtime.audioSystemConnected()
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("sf-runner-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let runner = HearingTestRunner(runtime: runtime, stateDirectory: directory)
        loop.runner.withLock { $0 = runner }
        try runner.setSettings(HearingTestSettings(timing: Self.fast))
        let events = runner.events()
        // Both ears: with one ear tested, N2's thresholds could be the untested ear's (cross-hearing)
        // and the gate keeps such a result (masking needed but not done).
        try await runner.start(ears: [.left, .right], frequencies: [500, 1000, 2000, 4000])
        #expect(runtime.controller.session?.isInterrupted == true)
        #expect(runtime.engine.isInTestMode)
        #expect(throws: ControlError.self) { try runner.setSettings(HearingTestSettings()) }

        var record: HearingTestRecord?
        var interruptions: [Bool] = []
        for await event in events {
            if case .results(let finished) = event { record = finished }
            if case .interrupted(let interrupted) = event { interruptions.append(interrupted) }
            if case .state(let state) = event, !state.isActive { break }
        }
        #expect(runner.state == .done(profileRefusal: nil), "\(runner.state)")
        #expect(interruptions == [true, false])
        let result = try #require(record?.results.first)
        for (frequency, level) in result.thresholds {
            let truth = SimulatedListener.standard(left: "N2").threshold(.left, at: frequency)
            #expect(abs(level - truth) <= 10, "\(frequency) Hz: \(level) vs \(truth)")
        }
        #expect(result.thresholds.count == 4)
        // The profile is the result; the recommendation enabled processing (after the interruption).
        let profile = try #require(runtime.presets.profile)
        #expect(profile.left?.points.map(\.threshold) == result.thresholds.map(\.level))
        #expect(runtime.controller.session?.isInterrupted == false)
        #expect(runtime.controller.session?.isEnabled.value == true)
        #expect(!runtime.engine.isInTestMode)
        let kept = try FileManager.default.contentsOfDirectory(atPath: directory.appendingPathComponent("hearing-tests").path)
        #expect(kept.count == 1 && kept[0].hasSuffix(".json"), "\(kept)")
    }

    @Test func cancelSubmitsNothingAndResolvesTheInterruption() async throws {
        let runtime = try makeRuntime()
        let loop = ListeningLoop(engine: runtime.engine, listener: .standard(left: "N1"))
        defer { loop.stop() }
        try await runtime.audioSystemConnected()
        let runner = HearingTestRunner(runtime: runtime)
        loop.runner.withLock { $0 = runner }
        try runner.setSettings(HearingTestSettings(timing: Self.fast))
        try await runner.start(ears: [.left, .right])
        try await Task.sleep(for: .milliseconds(800))
        try runner.pause()
        #expect(runner.state == .paused)
        try runner.resume()
        #expect(runner.state.isActive && runner.state != .paused)
        try runner.cancel()
        let deadline = ContinuousClock.now + .seconds(30)
        while runner.state.isActive && ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(10)) }
        #expect(runner.state.name == "cancelled", "\(runner.state)")
        #expect(runtime.presets.profile == nil)
        #expect(runtime.controller.session?.isInterrupted == false)
        #expect(!runtime.engine.isInTestMode)
    }
}

/// A stand-in audio thread that renders two channels in real time and a listener on them:
/// it measures each tone (RMS after the onset ramp), converts it to dB HL through the default
/// calibration and the TDH-39 table, and presses `runner.heard()` 150 ms after the onset with
/// the simulated listener's probability.
final class ListeningLoop: Sendable {
    let runner = Mutex<HearingTestRunner?>(nil)
    private let running = Atomic<Bool>(true)
    private let done = DispatchSemaphore(value: 0)

    init(engine: AudioEngine, listener: SimulatedListener, seed: UInt64 = 7) {
        let thread = Thread { [self] in
            let rate = 48000.0, block = 256
            var driver = InMemoryDriver(engine: engine, sampleRate: rate, blockSize: block, channelCount: 2)
            let silence = [[Float]](repeating: [Float](repeating: 0, count: block), count: 2)
            let calibration = ToneCalibration(fullScaleSPL: PresetGenerator.defaultCalibration)
            var random = SeededRandom(seed: seed)
            var tone: [[Float]] = [[], []]
            var decided = false
            var pressAt: ContinuousClock.Instant?
            let start = ContinuousClock.now
            var cycles = 0
            while running.load(ordering: .acquiring) {
                let output = driver.render(silence).outputs
                cycles += 1
                if output.contains(where: { $0.contains { $0 != 0 } }) {
                    tone[0] += output[0]
                    tone[1] += output[1]
                } else if !tone[0].isEmpty {
                    tone = [[], []]
                    decided = false
                }
                // Decide once 100 ms of the tone are in: measure 30…100 ms (after the ramp).
                if !decided, tone[0].count >= Int(0.1 * rate) {
                    decided = true
                    let channel = tone[0].map(abs).max()! > 0 ? 0 : 1
                    let window = tone[channel][Int(0.03 * rate)..<Int(0.1 * rate)]
                    let rms = (window.reduce(0) { $0 + Double($1) * Double($1) } / Double(window.count)).squareRoot()
                    var crossings = 0
                    for index in window.indices.dropFirst() where window[index - 1] < 0 && window[index] >= 0 { crossings += 1 }
                    let measured = Double(crossings) / 0.07
                    let frequency = Audiogram.standardFrequencies.min { abs(log2($0 / measured)) < abs(log2($1 / measured)) }!
                    let level = 20 * log10(rms * 2.0.squareRoot()) + calibration.fullScaleSPL - calibration.earphone.retspl(at: frequency)
                    let ear: Ear = channel == 0 ? .left : .right
                    if Double.random(in: 0..<1, using: &random) < listener.probabilityOfHeard(ear, frequency: frequency, level: level) {
                        pressAt = ContinuousClock.now + .milliseconds(50)
                    }
                }
                if let time = pressAt, ContinuousClock.now >= time {
                    pressAt = nil
                    try? runner.withLock { $0 }?.heard()
                }
                // Real time: one block every 256 / 48000 s.
                let due = start + .seconds(Double(cycles * block) / rate)
                let wait = due - ContinuousClock.now
                if wait > .zero { Thread.sleep(forTimeInterval: Double(wait.components.attoseconds) * 1e-18) }
            }
            done.signal()
        }
        thread.start()
    }

    func stop() {
        running.store(false, ordering: .releasing)
        done.wait()
    }
}
