import Foundation
import SoundFitDSP
import SoundFitTestSupport
import Testing

@Suite("ProcessingChain")
struct ProcessingChainTests {
    static let fs = 48000.0

    static func spec(channels: Int = 2, maximumFrameCount: Int = 256) -> ProcessingSpec {
        ProcessingSpec(sampleRate: fs, maximumFrameCount: maximumFrameCount, channelCount: channels)
    }

    static let allEnabled = ChainSettings(
        filter: FilterSettings(isEnabled: true, type: .peak, cutoff: 800, q: 1.5, gain: 6),
        ringModulator: RingModulatorSettings(isEnabled: true, frequency: 22, mix: 0.7),
        outputGain: OutputGainSettings(isEnabled: true, gain: -6))

    /// Random samples including the awkward ones: NaN with a payload, infinities, denormals,
    /// signed zeros.
    static func awkwardNoise(count: Int, seed: UInt64) -> [Float] {
        var random = SeededRandom(seed: seed)
        var out = (0..<count).map { _ in Float(bitPattern: UInt32(truncatingIfNeeded: random.next())) }
        out[0] = Float(bitPattern: 0x7FC0_1234)
        out[1] = .infinity
        out[2] = -.infinity
        out[3] = Float(bitPattern: 1)
        out[4] = -0.0
        return out
    }

    @Test("default settings are a bit-exact passthrough (in and out of place)")
    func bypassedIsBitExact() {
        let input = (0..<3).map { Self.awkwardNoise(count: 3000, seed: UInt64($0)) }
        for inPlace in [false, true] {
            var chain = ProcessingChain(spec: Self.spec(channels: 3))
            let passthrough = chain.isPassthrough
            #expect(passthrough)
            let out = runChain(&chain, input, block: 700, inPlace: inPlace)
            for c in 0..<3 { #expect(out.channel(c).isBitIdentical(to: input[c]), "channel \(c), in place \(inPlace)") }
        }
    }

    /// Every stage enabled, then every stage disabled: once the 10 ms fades have completed the
    /// chain is a bit-exact copy again.
    @Test("bit-exact again after the disable fades complete")
    func bypassAfterDisableFade() {
        var chain = ProcessingChain(spec: Self.spec(), settings: Self.allEnabled)
        let noise = (0..<2).map { SignalGenerator.whiteNoise(count: 4800, seed: UInt64(20 + $0)) }
        _ = runChain(&chain, noise)
        let notPassthrough = chain.isPassthrough
        #expect(!notPassthrough)
        var off = Self.allEnabled
        off.filter.isEnabled = false
        off.ringModulator.isEnabled = false
        off.outputGain.isEnabled = false
        chain.apply(off)
        _ = runChain(&chain, noise.map { Array($0[0..<1200]) })   // 25 ms > 10 ms fades
        let passthrough = chain.isPassthrough
        #expect(passthrough)
        let input = (0..<2).map { Self.awkwardNoise(count: 2000, seed: UInt64(30 + $0)) }
        let out = runChain(&chain, input, block: 333)
        for c in 0..<2 { #expect(out.channel(c).isBitIdentical(to: input[c])) }
        // Disabled output gain at -6 dB is unity too; enabled at exactly 0 dB as well.
        var zeroDB = off
        zeroDB.outputGain = OutputGainSettings(isEnabled: true, gain: 0)
        chain.apply(zeroDB)
        _ = runChain(&chain, noise.map { Array($0[0..<1200]) })
        let out2 = runChain(&chain, input, block: 333)
        for c in 0..<2 { #expect(out2.channel(c).isBitIdentical(to: input[c])) }
    }

    /// A bypassed chain skips its stages after the first block, never the output limit: a ceiling
    /// set while it passes through holds every sample from the next block on.
    @Test("the output limit holds on a chain that passes through")
    func limitHoldsWhilePassingThrough() {
        var chain = ProcessingChain(spec: Self.spec())
        let tone = Measurement.sine(frequency: 440, amplitude: 0.9, sampleRate: Self.fs, count: 4800)
        let before = runChain(&chain, [tone, tone], block: 64)
        let passthrough = chain.isPassthrough
        #expect(passthrough)
        #expect(before.channel(0).isBitIdentical(to: tone))
        chain.setOutputCeiling(0.5)
        let after = runChain(&chain, [tone, tone], block: 64)
        for c in 0..<2 {
            let peak = after.channel(c).map { abs($0) }.max() ?? 0
            #expect(peak <= 0.5, "channel \(c)")
            #expect(peak > 0.45, "channel \(c)")
        }
    }

    /// Toggling each stage on and off under a 1 kHz tone: the largest sample-to-sample jump stays
    /// within 5 % of the largest jump of the steady dry or steady processed signal. Control: a hard
    /// switch between the two at the worst sample exceeds that bound.
    @Test("enable/disable cross-fades have no click", arguments: [0, 1, 2, 3])
    func togglesAreClickFree(stage: Int) {
        let tone = Measurement.sine(frequency: 1000, amplitude: 0.5, sampleRate: Self.fs, count: 14400)
        var on = ChainSettings()
        switch stage {
        case 0: on.filter = FilterSettings(isEnabled: true, type: .highpass, cutoff: 5000, q: 0.7071)
        case 1: on.ringModulator = RingModulatorSettings(isEnabled: true, frequency: 40, mix: 1)
        case 2: on.outputGain = OutputGainSettings(isEnabled: true, gain: -30)
        default: on = Self.allEnabled
        }
        var off = on
        off.filter.isEnabled = false
        off.ringModulator.isEnabled = false
        off.outputGain.isEnabled = false
        // Steady references.
        var wetChain = ProcessingChain(spec: Self.spec(channels: 1), settings: on)
        let wet = runChain(&wetChain, [tone]).channel(0)
        let steadyJump = max(SignalGenerator.maximumJump(tone), SignalGenerator.maximumJump(wet))
        // Toggled: off -> on at 100 ms -> off at 200 ms, with the updates between 64-frame calls.
        var chain = ProcessingChain(spec: Self.spec(channels: 1), settings: off)
        let source = ChannelBuffers([tone]), out = ChannelBuffers(channelCount: 1, frameCount: tone.count)
        for offset in stride(from: 0, to: tone.count, by: 64) {
            if offset == 4800 { chain.apply(on) }
            if offset == 9600 { chain.apply(off) }
            chain.process(inputs: source.inputs(offset: offset), outputs: out.outputs(offset: offset),
                          frameCount: min(64, tone.count - offset))
        }
        let toggled = out.channel(0)
        let toggledJump = SignalGenerator.maximumJump(toggled)
        let hardJump = (1..<tone.count).map { abs(Double(wet[$0]) - Double(tone[$0 - 1])) }.max()!
        report("toggle stage \(stage): max jump \(String(format: "%.4f", toggledJump)) vs steady \(String(format: "%.4f", steadyJump)); hard switch would be \(String(format: "%.4f", hardJump))")
        #expect(toggledJump <= steadyJump * 1.05)
        #expect(hardJump > steadyJump * 1.05)
        // And the end is exactly dry again.
        #expect(toggled[12000...].elementsEqual(tone[12000...]))
    }

    /// A filter type change morphs over 10 ms: no click, and afterwards the new type's response.
    @Test("filter type change is click-free and lands on the new type")
    func typeMorph() {
        let tone = Measurement.sine(frequency: 1000, amplitude: 0.5, sampleRate: Self.fs, count: 24000)
        var settings = ChainSettings(filter: FilterSettings(isEnabled: true, type: .lowpass, cutoff: 1500, q: 0.7071))
        var chain = ProcessingChain(spec: Self.spec(channels: 1), settings: settings)
        let source = ChannelBuffers([tone]), out = ChannelBuffers(channelCount: 1, frameCount: tone.count)
        for offset in stride(from: 0, to: tone.count, by: 128) {
            if offset == 4864 {
                settings.filter.type = .highpass
                chain.apply(settings)
            }
            chain.process(inputs: source.inputs(offset: offset), outputs: out.outputs(offset: offset),
                          frameCount: min(128, tone.count - offset))
        }
        let output = out.channel(0)
        #expect(SignalGenerator.maximumJump(output) <= SignalGenerator.maximumJump(tone) * 1.05)
        let expected = CookbookBiquad(kind: .hpf, f0: 1500, q: 0.7071, dbGain: 0, fs: Self.fs).magnitude(atFrequency: 1000, fs: Self.fs)
        let measured = Measurement.toneAmplitude(Array(output[12000...]), frequency: 1000, sampleRate: Self.fs) / 0.5
        #expect(abs(20 * log10(measured / expected)) < 0.01)
    }

    /// Starts at its settings: no fade-in or ramp from defaults. From the first sample the output
    /// is the float64 model of filter -> ring modulator -> gain.
    @Test("starts at its settings, and equals the composed float64 model")
    func startsAtSettings() {
        let input = SignalGenerator.whiteNoise(count: 9600, seed: 50)
        var chain = ProcessingChain(spec: Self.spec(channels: 1), settings: Self.allEnabled)
        let out = runChain(&chain, [input], block: 100).channel(0)
        let filtered = CookbookBiquad(kind: .peakingEQ, f0: 800, q: 1.5, dbGain: 6, fs: Self.fs).process(input)
        let g = pow(10, -6 / 20.0)
        let reference = filtered.enumerated().map { n, y in
            let m = abs(sin(2 * Double.pi * Double((22 * n) % 48000) / 48000))
            return g * (0.3 * y + 0.7 * y * m)
        }
        let residual = Measurement.residualDecibels(out, reference: reference)
        let firstSamples = Measurement.residualDecibels(Array(out[0..<64]), reference: Array(reference[0..<64]))
        report("chain vs float64 model: residual \(String(format: "%.1f", residual)) dB (first 64 samples \(String(format: "%.1f", firstSamples)) dB)")
        #expect(residual <= -90)
        #expect(firstSamples <= -90)
    }

    /// Calls of any even size (zero, above `maximumFrameCount`) and in-place processing give
    /// bit-identical output, also while parameters move; odd call sizes give the same output up to
    /// float rounding (see the biquad's block-size test).
    @Test("call sizes and in-place processing do not change the output")
    func chunkingAndInPlace() {
        let input = (0..<2).map { SignalGenerator.whiteNoise(count: 6000, seed: UInt64(60 + $0)) }
        func run(maximumFrameCount: Int, blocks: [Int], inPlace: Bool) -> [[Float]] {
            var chain = ProcessingChain(spec: Self.spec(maximumFrameCount: maximumFrameCount), settings: Self.allEnabled)
            let source = ChannelBuffers(input)
            let destination = inPlace ? source : ChannelBuffers(channelCount: 2, frameCount: 6000)
            var offset = 0, i = 0
            for end in [3000, 6000] {
                while offset < end {
                    let n = min(blocks[i % blocks.count], end - offset)
                    chain.process(inputs: source.inputs(offset: offset), outputs: destination.outputs(offset: offset), frameCount: n)
                    offset += n
                    i += 1
                }
                var moved = Self.allEnabled   // every parameter moves from frame 3000
                moved.filter = FilterSettings(isEnabled: true, type: .notch, cutoff: 3000, q: 3)
                moved.ringModulator.mix = 0.2
                moved.outputGain.gain = 4
                chain.apply(moved)
            }
            return [destination.channel(0), destination.channel(1)]
        }
        let reference = run(maximumFrameCount: 4096, blocks: [3000], inPlace: false)
        for (max, blocks, inPlace) in [(64, [3000], false), (256, [2, 0, 18, 300, 256], true), (100, [1000, 2], false), (4096, [3000], true)] {
            let out = run(maximumFrameCount: max, blocks: blocks, inPlace: inPlace)
            for c in 0..<2 { #expect(firstBitDifference(out[c], reference[c]) == nil, "max \(max) blocks \(blocks) in place \(inPlace)") }
        }
        for (max, blocks) in [(256, [1, 0, 17, 300, 255]), (100, [999, 1])] {
            let out = run(maximumFrameCount: max, blocks: blocks, inPlace: false)
            for c in 0..<2 { #expect(Measurement.residualDecibels(out[c], reference: reference[c].map(Double.init)) < -120) }
        }
    }

    @Test("setSampleRate: the filter response is correct at the new rate")
    func sampleRateChange() {
        let settings = ChainSettings(filter: FilterSettings(isEnabled: true, type: .highshelf, cutoff: 3000, q: 0.7071, gain: -9))
        var chain = ProcessingChain(spec: Self.spec(), settings: settings)
        _ = runChain(&chain, [SignalGenerator.whiteNoise(count: 2000, seed: 1), SignalGenerator.whiteNoise(count: 2000, seed: 2)])
        chain.setSampleRate(44100)
        let rate = chain.spec.sampleRate
        #expect(rate == 44100)
        let probe = ResponseProbe(sampleRate: 44100, frequencies: responseFrequencies(sampleRate: 44100, cutoffs: [3000]))
        let out = runChain(&chain, [probe.input, probe.input], block: 512)
        let measured = probe.responseDecibels(of: out.channel(1))
        let reference = settings.filter.cookbook(sampleRate: 44100)
        let worst = zip(probe.frequencies, measured).map { abs($1 - reference.magnitudeDecibels(atFrequency: $0, fs: 44100)) }.max()!
        report("chain after setSampleRate(44100): worst response error \(String(format: "%.5f", worst)) dB")
        #expect(worst <= 0.1)
    }

    @Test("settings are the clamped targets; zero frames is a no-op")
    func settingsAndEdges() {
        var chain = ProcessingChain(spec: Self.spec(), settings: Self.allEnabled)
        let initial = chain.settings
        #expect(initial == Self.allEnabled)
        var wild = Self.allEnabled
        wild.filter.cutoff = 50000
        wild.outputGain.gain = 40
        chain.apply(wild)
        let applied = chain.settings
        #expect(applied.filter.cutoff == 20000 && applied.outputGain.gain == 12)
        let buffers = ChannelBuffers([[1, 2], [3, 4]])
        chain.process(inputs: buffers.inputs, outputs: buffers.outputs, frameCount: 0)
        #expect(buffers.channel(0) == [1, 2])
    }
}
