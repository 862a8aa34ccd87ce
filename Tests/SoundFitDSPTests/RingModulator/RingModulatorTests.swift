import Foundation
import SoundFitDSP
import SoundFitTestSupport
import Testing

@Suite("RingModulator")
struct RingModulatorTests {
    /// `(1 - mix)·x + mix·x·|sin(2π·f·n/fs)|` with the phase `f·n/fs mod 1` computed exactly in
    /// integers (for integer f and fs), then the sine in float64: an exact reference at any n.
    static func reference(x: Float, n: Int, frequency: Int, sampleRate: Int, mix: Double) -> Double {
        let numerator = (frequency * n) % sampleRate   // f·n mod fs, exact
        let modulator = abs(sin(2 * Double.pi * Double(numerator) / Double(sampleRate)))
        return (1 - mix) * Double(x) + mix * Double(x) * modulator
    }

    static func spec(_ sampleRate: Double = 48000, channels: Int = 2, maximumFrameCount: Int = 256) -> ProcessingSpec {
        ProcessingSpec(sampleRate: sampleRate, maximumFrameCount: maximumFrameCount, channelCount: channels)
    }

    @Test("equals the formula sample by sample", arguments: [(22, 1.0), (15, 0.3), (40, 0.75)])
    func matchesFormula(frequency: Int, mix: Double) {
        let frames = 48000
        let left = SignalGenerator.whiteNoise(count: frames, amplitude: 1, seed: 1)
        let right = SignalGenerator.whiteNoise(count: frames, amplitude: 1, seed: 2)
        let buffers = ChannelBuffers([left, right])
        var ring = RingModulator(spec: Self.spec(), settings: RingModulatorSettings(isEnabled: true, frequency: Float(frequency), mix: Float(mix)))
        ring.process(buffers.outputs, frameCount: frames)
        var worst = 0.0
        for (c, input) in [left, right].enumerated() {
            let out = buffers.channel(c)
            for n in 0..<frames {
                let expected = Self.reference(x: input[n], n: n, frequency: frequency, sampleRate: 48000, mix: mix)
                worst = max(worst, abs(Double(out[n]) - expected))
            }
        }
        report("ring modulator f \(frequency) Hz mix \(mix): max |error| vs formula \(String(format: "%.2e", worst))")
        #expect(worst <= 1e-6)
    }

    /// One call, or many calls of odd sizes (including sizes above `maximumFrameCount` and
    /// zero), give bit-identical output: no discontinuity at buffer boundaries.
    @Test("buffer boundaries are seamless (bit-identical for any split)")
    func blockInvariance() {
        let input = SignalGenerator.whiteNoise(count: 20000, amplitude: 1, seed: 3)
        func run(_ blocks: [Int]) -> [Float] {
            let buffers = ChannelBuffers([input])
            var ring = RingModulator(spec: Self.spec(channels: 1, maximumFrameCount: 128),
                                     settings: RingModulatorSettings(isEnabled: true, frequency: 31.7, mix: 0.8))
            var offset = 0, i = 0
            while offset < input.count {
                let n = min(blocks[i % blocks.count], input.count - offset)
                ring.process(buffers.outputs(offset: offset), frameCount: n)
                offset += n
                i += 1
            }
            return buffers.channel(0)
        }
        let reference = run([20000])
        #expect(firstBitDifference(run([1, 3, 0, 127, 128, 129, 1000, 77]), reference) == nil)
        #expect(firstBitDifference(run([64]), reference) == nil)
    }

    /// After ten hours of samples (advanced exactly with `advance(frames:)`) the output still
    /// equals the formula at n = 10 h·fs + k. Control: a float32 time accumulator like the
    /// naive time base (`totalFrames / sampleRate` in Float) is off by far more at that point.
    @Test("phase exact after ten simulated hours", arguments: [(22, 48000), (37, 44100), (15, 96000)])
    func tenHours(frequency: Int, sampleRate: Int) {
        let tenHours = 10 * 3600 * sampleRate
        var ring = RingModulator(spec: Self.spec(Double(sampleRate), channels: 1),
                                 settings: RingModulatorSettings(isEnabled: true, frequency: Float(frequency), mix: 1))
        ring.advance(frames: tenHours)
        let input = [Float](repeating: 1, count: 4000)
        let buffers = ChannelBuffers([input])
        ring.process(buffers.outputs, frameCount: input.count)
        let out = buffers.channel(0)
        var worst = 0.0, naiveWorst = 0.0
        for k in 0..<input.count {
            let expected = Self.reference(x: 1, n: tenHours + k, frequency: frequency, sampleRate: sampleRate, mix: 1)
            worst = max(worst, abs(Double(out[k]) - expected))
            let naiveTime = Float(tenHours + k) / Float(sampleRate)
            let naive = abs(sinf(Float.pi * 2 * naiveTime * Float(frequency)))
            naiveWorst = max(naiveWorst, abs(Double(naive) - expected))
        }
        report("ring modulator after 10 h (\(frequency) Hz @\(sampleRate)): max error \(String(format: "%.2e", worst)); "
               + "float32-time control \(String(format: "%.2e", naiveWorst))")
        #expect(worst <= 1e-6)
        #expect(naiveWorst > 1e-2)
        // The accumulator itself: exactly N·increment mod 2⁶⁴.
        let phase = ring.phase
        #expect(phase.rawValue == UInt64(tenHours + input.count) &* phase.increment)
    }

    /// A frequency change keeps the phase: the modulator continues from where it was, with no
    /// jump larger than the faster slope allows.
    @Test("frequency changes are phase-continuous")
    func frequencyChangeIsContinuous() {
        let fs = 48000.0
        var ring = RingModulator(spec: Self.spec(fs, channels: 1), settings: RingModulatorSettings(isEnabled: true, frequency: 15, mix: 1))
        let ones = [Float](repeating: 1, count: 9000)
        let buffers = ChannelBuffers([ones])
        ring.process(buffers.outputs, frameCount: 3000)
        let phaseBefore = ring.phase.cycles
        ring.apply(RingModulatorSettings(isEnabled: true, frequency: 40, mix: 1))
        let phaseAfterChange = ring.phase.cycles
        #expect(phaseAfterChange == phaseBefore)
        ring.process(buffers.outputs(offset: 3000), frameCount: 6000)
        let out = buffers.channel(0)
        // |d/dt |sin|| <= 2π·f/fs per sample.
        let bound = 2 * Double.pi * 40 / fs * 1.001
        #expect(SignalGenerator.maximumJump(out) <= bound)
        // After the change: |sin(2π(φ0 + 40·k/fs))|.
        for k in [0, 1, 100, 5999] {
            let expected = abs(sin(2 * Double.pi * (phaseBefore + 40 * Double(k) / fs)))
            #expect(abs(Double(out[3000 + k]) - expected) < 1e-6)
        }
    }

    /// Mix moves linearly over 20 ms without a jump, then holds exactly.
    @Test("mix is smoothed")
    func mixSmoothing() {
        let fs = 48000.0
        var ring = RingModulator(spec: Self.spec(fs, channels: 1), settings: RingModulatorSettings(isEnabled: true, frequency: 22, mix: 0))
        let tone = Measurement.sine(frequency: 440, amplitude: 0.5, sampleRate: fs, count: 4800)
        let buffers = ChannelBuffers([tone])
        ring.process(buffers.outputs, frameCount: 480)
        ring.apply(RingModulatorSettings(isEnabled: true, frequency: 22, mix: 1))
        ring.process(buffers.outputs(offset: 480), frameCount: 4320)
        let out = buffers.channel(0)
        #expect(out[0..<480].elementsEqual(tone[0..<480]))   // mix 0: dry, untouched
        let toneJump = SignalGenerator.maximumJump(tone)
        #expect(SignalGenerator.maximumJump(out) <= toneJump * 1.01)
        // After the 20 ms ramp (960 samples) the formula holds with mix 1.
        for n in 1500..<4800 {
            let expected = Self.reference(x: tone[n], n: n, frequency: 22, sampleRate: 48000, mix: 1)
            #expect(abs(Double(out[n]) - expected) < 1e-6)
        }
    }

    @Test("setSampleRate recomputes the phase increment")
    func sampleRateChange() {
        var ring = RingModulator(spec: Self.spec(48000, channels: 1), settings: RingModulatorSettings(isEnabled: true, frequency: 25, mix: 1))
        let ones = [Float](repeating: 1, count: 9600)
        let warmup = ChannelBuffers([ones])
        ring.process(warmup.outputs, frameCount: 1234)
        ring.setSampleRate(96000)
        let buffers = ChannelBuffers([ones])
        ring.process(buffers.outputs, frameCount: ones.count)
        let out = buffers.channel(0)
        for n in 0..<ones.count {
            #expect(abs(Double(out[n]) - Self.reference(x: 1, n: n, frequency: 25, sampleRate: 96000, mix: 1)) < 1e-6)
        }
    }

    /// Disabled: the buffers are untouched, bit for bit (NaN payloads and denormals included).
    @Test("disabled is a bit-exact no-op")
    func disabledIsIdentity() {
        var input = SignalGenerator.whiteNoise(count: 1000, seed: 4)
        input[3] = .nan
        input[4] = Float(bitPattern: 1)   // denormal
        let buffers = ChannelBuffers([input, input])
        var ring = RingModulator(spec: Self.spec(), settings: RingModulatorSettings(isEnabled: false))
        ring.process(buffers.outputs, frameCount: input.count)
        #expect(buffers.channel(0).isBitIdentical(to: input))
        let bypassed = ring.isBypassed
        #expect(bypassed)
    }
}
