import Foundation
import SoundFitDSP
import SoundFitTestSupport
import Testing

@Suite("BiquadFilter: float32 precision and channel lanes")
struct BiquadPrecisionTests {
    /// Null test against a float64 direct-form-I model of the independent cookbook design:
    /// white noise through every type at cutoffs 50 Hz…15 kHz, Q 0.5…18, gains ±12 dB, at 44.1,
    /// 48 and 96 kHz. The residual relative to the model's output stays at or below −90 dB.
    @Test("float32 kernel vs float64 model: residual <= -90 dB for cutoffs >= 50 Hz",
          arguments: [44100.0, 48000.0, 96000.0])
    func residualAgainstFloat64Model(sampleRate: Double) {
        let input = SignalGenerator.whiteNoise(count: Int(sampleRate / 2), seed: 42)
        var worst = -Double.infinity, worstAt = ""
        for settings in filterSettingsGrid(cutoffs: [50, 200, 1000, 5000, 15000], qs: [0.5, 0.7071, 4, 18]) {
            var filter = BiquadFilter(
                spec: ProcessingSpec(sampleRate: sampleRate, maximumFrameCount: 256, channelCount: 1),
                settings: settings)
            let buffers = ChannelBuffers([input])
            filter.process(buffers.outputs, frameCount: input.count)
            let residual = Measurement.residualDecibels(buffers.channel(0),
                                                        reference: settings.cookbook(sampleRate: sampleRate).process(input))
            if residual > worst { worst = residual; worstAt = "\(settings.type.name) fc \(settings.cutoff) Q \(settings.q) gain \(settings.gain)" }
        }
        report("float32 vs float64 @\(Int(sampleRate)) Hz: worst residual \(String(format: "%.1f", worst)) dB (\(worstAt))")
        #expect(worst <= -90)
    }

    /// Control: a naive float32 direct-form-I biquad fails the same null test at a low cutoff, so
    /// the test above can fail.
    @Test("control: naive float32 direct form fails the null test at 50 Hz")
    func naiveDirectFormFails() {
        let sampleRate = 96000.0
        let input = SignalGenerator.whiteNoise(count: 48000, seed: 42)
        let reference = CookbookBiquad(kind: .lpf, f0: 50, q: 0.7071, dbGain: 0, fs: sampleRate)
        let naive = reference.processFloat32(input)
        let residual = Measurement.residualDecibels(naive, reference: reference.process(input))
        report("naive float32 direct form, lowpass 50 Hz @96 kHz: residual \(String(format: "%.1f", residual)) dB")
        #expect(residual > -90)
    }

    /// The kernel runs channels in SIMD lane groups of four (pairs of groups per loop, padded
    /// lanes for the rest). Every channel count from 1 to 9, plus 64, gives each channel exactly
    /// the output of a mono filter on that channel.
    @Test("every channel count processes each channel like mono", arguments: [1, 2, 3, 4, 5, 6, 7, 8, 9, 64])
    func lanesAreIndependent(channelCount: Int) {
        let settings = FilterSettings(isEnabled: true, type: .peak, cutoff: 700, q: 2, gain: 6)
        let spec = ProcessingSpec(sampleRate: 48000, maximumFrameCount: 128, channelCount: channelCount)
        let frames = 1000
        let channels = (0..<channelCount).map { SignalGenerator.whiteNoise(count: frames, seed: UInt64(100 + $0)) }
        var filter = BiquadFilter(spec: spec, settings: settings)
        let buffers = ChannelBuffers(channels)
        filter.process(buffers.outputs, frameCount: 300)
        filter.apply(FilterSettings(isEnabled: true, type: .lowpass, cutoff: 3000, q: 1))  // moving part too
        filter.process(buffers.outputs(offset: 300), frameCount: frames - 300)
        for c in 0..<channelCount {
            var mono = BiquadFilter(spec: ProcessingSpec(sampleRate: 48000, maximumFrameCount: 128, channelCount: 1),
                                    settings: settings)
            let single = ChannelBuffers([channels[c]])
            mono.process(single.outputs, frameCount: 300)
            mono.apply(FilterSettings(isEnabled: true, type: .lowpass, cutoff: 3000, q: 1))
            mono.process(single.outputs(offset: 300), frameCount: frames - 300)
            #expect(firstBitDifference(buffers.channel(c), single.channel(0)) == nil, "channel \(c) of \(channelCount)")
        }
    }

    /// State is carried across calls. Splits into even-sized calls (every JACK period), including
    /// calls longer than `maximumFrameCount` and zero-length calls, give bit-identical output.
    /// Odd-sized calls give the same output up to float rounding: the steady loop advances two
    /// samples per update, and a call that ends on an even frame finishes it with a one-sample
    /// update that rounds differently (residual far below −120 dB).
    @Test("block size does not change the output")
    func blockSizeInvariance() {
        let settings = FilterSettings(isEnabled: true, type: .lowshelf, cutoff: 120, q: 0.9, gain: -8)
        let input = SignalGenerator.whiteNoise(count: 5000, seed: 5)
        func run(_ blocks: [Int]) -> [Float] {
            var filter = BiquadFilter(spec: ProcessingSpec(sampleRate: 44100, maximumFrameCount: 64, channelCount: 2),
                                      settings: settings)
            let buffers = ChannelBuffers([input, input])
            var offset = 0, i = 0
            // A parameter change at frame 2000 (a block boundary in every split) starts a move.
            for end in [2000, input.count] {
                while offset < end {
                    let n = min(blocks[i % blocks.count], end - offset)
                    filter.process(buffers.outputs(offset: offset), frameCount: n)
                    offset += n
                    i += 1
                }
                filter.apply(FilterSettings(isEnabled: true, type: .highshelf, cutoff: 5000, q: 0.7, gain: 4))
            }
            return buffers.channel(1)
        }
        let reference = run([1000])
        #expect(firstBitDifference(run([2, 8, 0, 14, 64, 200, 4]), reference) == nil)
        #expect(firstBitDifference(run([2000, 3000]), reference) == nil)
        for odd in [[1, 7, 0, 13, 64, 200, 3], [1999, 1, 2999]] {
            let residual = Measurement.residualDecibels(run(odd), reference: reference.map(Double.init))
            report("biquad, odd call sizes \(odd): residual \(String(format: "%.1f", residual)) dB vs one call")
            #expect(residual < -120)
        }
    }

    /// Silence after a loud burst decays to exact zeros (no denormal tail left in the states).
    @Test("state decays to zero after the signal stops")
    func decaysToZero() {
        var filter = BiquadFilter(spec: ProcessingSpec(sampleRate: 48000, maximumFrameCount: 256, channelCount: 1),
                                  settings: FilterSettings(isEnabled: true, type: .bandpass, cutoff: 100, q: 10))
        var signal = SignalGenerator.whiteNoise(count: 4800, amplitude: 1, seed: 8)
        signal += [Float](repeating: 0, count: 48000 * 5)
        let buffers = ChannelBuffers([signal])
        filter.process(buffers.outputs, frameCount: signal.count)
        let tail = buffers.channel(0, frames: signal.count - 256 ..< signal.count)
        #expect(tail.allSatisfy { $0 == 0 })
    }
}
