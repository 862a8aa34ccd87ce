import SoundFitDSP
import SoundFitEngine
import SoundFitHearing
import SoundFitModel
import SoundFitRuntime
import SoundFitTestSupport
import Testing

/// The ceiling in the runtime: the maximum output cannot go above it, and the limit handed to
/// the engine (linear peak) never goes above its dBFS, whatever the calibration becomes.
@Suite struct OutputCeilingTests {
    private func makeRuntime(ceiling: OutputCeiling, calibration: Double = 100) throws -> SoundFitRuntime {
        let runtime = SoundFitRuntime(engine: AudioEngine(), sessionConfiguration: .fineTuning(techLevel: try TechLevel(3)),
                                      presets: ProfilePresetSource(calibration: calibration), ceiling: ceiling)
        runtime.maximumOutputSPL = ceiling.maximumOutputSPL
        return runtime
    }

    /// The engine's limit in dBFS.
    private func engineLimit(_ runtime: SoundFitRuntime) -> Double { Decibels.decibels(Double(runtime.engine.outputCeiling)) }

    @Test func theLimitIsTheRequestClampedAtTheCeilingsDBFS() {
        let ceiling = OutputCeiling(maximumOutputSPL: 90, fullScaleSPL: 100)
        #expect(ceiling.dBFS == -10)
        #expect(ceiling.limitDBFS(maximumOutputSPL: 90, calibration: 100) == -10)
        #expect(ceiling.limitDBFS(maximumOutputSPL: 70, calibration: 100) == -30)
        #expect(ceiling.limitDBFS(maximumOutputSPL: 90, calibration: 80) == -10, "a lower calibration is clamped")
        #expect(ceiling.limitDBFS(maximumOutputSPL: 90, calibration: 110) == -20, "a higher one tightens")
        #expect(ceiling.refusal(maximumOutputSPL: 90) == nil)
        #expect(ceiling.refusal(maximumOutputSPL: 40) == nil)
        let refusal = ceiling.refusal(maximumOutputSPL: 130)
        #expect(refusal == "maximum output 130 dB SPL is above the ceiling 90 dB SPL set at start; restart with --max-output to raise it")
        #expect(ceiling.refusal(maximumOutputSPL: 90.5)?.contains("90.5 dB SPL") == true)
    }

    @Test func aStoredCalibrationOnlyTightensTheCeiling() {
        #expect(OutputCeiling.startCalibration(commandLine: nil, stored: 80) == PresetGenerator.defaultCalibration)
        #expect(OutputCeiling.startCalibration(commandLine: nil, stored: 110) == 110)
        #expect(OutputCeiling.startCalibration(commandLine: 80, stored: 110) == 80, "the command line decides")
    }

    @Test func theRuntimeNeverHandsTheEngineALimitAboveTheCeiling() async throws {
        let runtime = try makeRuntime(ceiling: OutputCeiling(maximumOutputSPL: 90, fullScaleSPL: 100))
        #expect(abs(engineLimit(runtime) - -10) < 1e-4)
        runtime.maximumOutputSPL = 70
        #expect(abs(engineLimit(runtime) - -30) < 1e-4)
        #expect(runtime.effectiveMaximumOutputSPL == 70)
        runtime.maximumOutputSPL = 90
        try await runtime.setCalibration(80)
        #expect(abs(engineLimit(runtime) - -10) < 1e-4, "calibration 80 would put 90 dB SPL at +10 dBFS")
        #expect(runtime.outputLimitDBFS == -10)
        #expect(runtime.effectiveMaximumOutputSPL == 70, "the limit in force through the new calibration")
        try await runtime.setCalibration(110)
        #expect(abs(engineLimit(runtime) - -20) < 1e-4)
        #expect(runtime.effectiveMaximumOutputSPL == 90)
    }

    /// The hearing test presents no tone above the limit in force: a tone the limiter would cut
    /// would give a wrong threshold.
    @Test func theHearingTestStaysBelowTheLimitInForce() async throws {
        let runtime = try makeRuntime(ceiling: OutputCeiling(maximumOutputSPL: 90, fullScaleSPL: 100))
        let runner = HearingTestRunner(runtime: runtime)
        var settings = HearingTestSettings()
        settings.maximumLevel = 120
        let before = runner.maximumLevel(at: 1000, settings: settings)
        // Calibration 80: full scale is 80 dB SPL, the limit in force 70 (−10 dBFS): 20 dB less,
        // not 10 (full scale alone).
        try await runtime.setCalibration(80)
        let after = runner.maximumLevel(at: 1000, settings: settings)
        #expect(abs(before - after - 20) < 1e-9, "before \(before) dB HL, after \(after) dB HL")
    }

    @Test func withoutACeilingTheRangesAreTheOnlyLimit() throws {
        let runtime = SoundFitRuntime(engine: AudioEngine(), sessionConfiguration: .fineTuning(techLevel: try TechLevel(3)))
        #expect(runtime.ceiling == .unbounded)
        #expect(runtime.maximumOutputSPL == SoundFitRuntime.defaultMaximumOutputSPL)
        runtime.maximumOutputSPL = 130
        #expect(abs(engineLimit(runtime) - 30) < 1e-4)
        // A ceiling below the default starts the maximum output at the ceiling.
        let low = SoundFitRuntime(engine: AudioEngine(), sessionConfiguration: .fineTuning(techLevel: try TechLevel(3)),
                                  ceiling: OutputCeiling(maximumOutputSPL: 80, fullScaleSPL: 100))
        #expect(low.maximumOutputSPL == 80)
        #expect(abs(engineLimit(low) - -20) < 1e-4)
    }
}
