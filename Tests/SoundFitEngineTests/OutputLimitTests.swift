import SoundFitDSP
import SoundFitEngine
import SoundFitModel
import SoundFitTestSupport
import Testing

/// The output safety limit in the engine: set from the control side, enforced on every cycle
/// whatever the stages do, and its reduction reported back.
@Suite struct OutputLimitTests {
    @Test func theCeilingHoldsInEveryModeAndTheReductionIsReported() {
        var settings = ChainSettings()
        settings.outputGain.gain = 12
        let engine = AudioEngine(settings: settings)
        var driver = InMemoryDriver(engine: engine, channelCount: 2)
        let loud = SignalGenerator.multiTone(frequencies: [250, 1000, 4000], amplitude: 0.2, sampleRate: 48000,
                                             count: 24000, seed: 1)
        // No limit set: +12 dB goes through.
        let free = driver.render([loud, loud]).outputs
        #expect((free[0].map(abs).max() ?? 0) > 1)
        #expect(engine.takeOutputLimitReduction() == 0)

        engine.setOutputCeiling(0.5)
        let limited = driver.render([loud, loud]).outputs
        #expect((limited.flatMap { $0 }.map(abs).max() ?? 1) <= 0.5)
        #expect(engine.takeOutputLimitReduction() > 6)
        #expect(engine.takeOutputLimitReduction() == 0, "the reduction is reported once")

        // Every stage bypassed (the defaults): the limit still holds; quiet input passes bit-exact.
        let loudInput = loud.map { $0 * 4 }
        let bypassed = InMemoryDriverCheck.render(engine: AudioEngine(), [loudInput, loudInput], ceiling: 0.5)
        #expect((loudInput.map(abs).max() ?? 0) > 1)
        #expect((bypassed.flatMap { $0 }.map(abs).max() ?? 1) <= 0.5)
        let quiet = loud.map { $0 * 0.5 }
        #expect(InMemoryDriverCheck.render(engine: AudioEngine(), [quiet, quiet], ceiling: 0.5) == [quiet, quiet])
    }
}

/// A fresh renderer for one check.
enum InMemoryDriverCheck {
    static func render(engine: AudioEngine, _ inputs: [[Float]], ceiling: Float? = nil) -> [[Float]] {
        if let ceiling { engine.setOutputCeiling(ceiling) }
        var driver = InMemoryDriver(engine: engine, channelCount: inputs.count)
        return driver.render(inputs).outputs
    }
}
