import Foundation
import SoundFitModel
import SoundFitDSP
import SoundFitEngine
import SoundFitTestSupport
import Testing

@Suite struct RealtimeRendererTests {
    @Test func firstCycleAcknowledgesTheStartingValues() async throws {
        let engine = AudioEngine()
        var driver = InMemoryDriver(engine: engine)
        let cycle = driver.renderSilentCycle()
        for parameter in EngineSlot.allCases {
            let ack = engine.mailbox.acknowledgement(index: parameter.rawValue)
            #expect(ack.cycle == UInt32(cycle))
        }
    }

    @Test func aBatchTakesEffectInOneCycle() throws {
        let engine = AudioEngine()
        var driver = InMemoryDriver(engine: engine)
        driver.renderSilentCycle()
        _ = try engine.submit([(.filterType, .choice("highpass")), (.filterCutoff, .float(250)), (.filterQ, .float(2))])
        let cycle = driver.renderSilentCycle()
        let acks = [EngineSlot.filterType, .filterCutoff, .filterQ].map {
            engine.mailbox.acknowledgement(index: $0.rawValue)
        }
        #expect(acks.allSatisfy { $0.cycle == UInt32(cycle) })
        #expect(Set(acks.map(\.sequence)).count == 3)
        #expect(engine.settings.filter.type == .highpass)
        #expect(engine.settings.filter.cutoff == 250)
    }

    @Test func invalidValuesAreRejectedAndNothingIsPublished() {
        let engine = AudioEngine()
        #expect(throws: ParameterError.self) {
            _ = try engine.submit([(.outputGain, .float(-6)), (.filterCutoff, .float(99999))])
        }
        #expect(engine.value(of: .outputGain) == .float(0))
        #expect(engine.mailbox.publishedSequence(index: EngineSlot.outputGain.rawValue) == 0)
    }

    @Test func applyCompletesOnlyWhenACycleRuns() async throws {
        let engine = AudioEngine()
        let submission = try engine.submit([(.outputGain, .float(-6))])
        // No cycle runs: the wait must fail with a timeout, not report success.
        await #expect(throws: EngineError.timeout(seconds: 0.05)) {
            try await engine.waitUntilApplied(submission, timeout: .milliseconds(50))
        }
        var driver = InMemoryDriver(engine: engine)
        let cycle = driver.renderSilentCycle()
        let applied = try await engine.waitUntilApplied(submission, timeout: .seconds(5))
        #expect(applied == UInt32(cycle))
    }

    @Test func outputGainIsMeasurableInTheCycleThatAcknowledgedIt() async throws {
        let engine = AudioEngine()
        var driver = InMemoryDriver(engine: engine, blockSize: 256, channelCount: 1)
        driver.renderSilentCycle()
        _ = try engine.submit([(.outputGain, .float(-6))])
        let tone = Measurement.sine(frequency: 1000, amplitude: 0.25, sampleRate: 48000, count: 48000)
        let (outputs, _) = driver.render([tone])
        // After the smoothing ramp (well under 0.5 s) the level is −6 dB.
        let level = Measurement.decibels(Measurement.rms(outputs[0][24000...]) / Measurement.rms(tone[24000...]))
        #expect(abs(level + 6) < 0.01)
    }
}
