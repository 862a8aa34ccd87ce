import Foundation
import SoundFitDSP
import SoundFitTestSupport
import Testing

@Suite("OutputGain")
struct OutputGainTests {
    static let spec = ProcessingSpec(sampleRate: 48000, maximumFrameCount: 256, channelCount: 3)

    static func noise(_ count: Int = 2000) -> [[Float]] {
        (0..<3).map { SignalGenerator.whiteNoise(count: count, seed: UInt64(10 + $0)) }
    }

    /// Starts at its settings (no ramp from 0 dB): the first sample is already scaled.
    @Test("steady gain scales every sample by 10^(dB/20)", arguments: [-60.0, -6.0, 3.5, 12.0])
    func steadyGain(decibels: Double) {
        let input = Self.noise()
        let buffers = ChannelBuffers(input)
        var gain = OutputGain(spec: Self.spec, settings: OutputGainSettings(gain: Float(decibels)))
        gain.process(buffers.outputs, frameCount: 2000)
        let factor = Float(pow(10, decibels / 20))
        for c in 0..<3 {
            #expect(buffers.channel(c).isBitIdentical(to: input[c].map { $0 * factor }))
        }
    }

    @Test("0 dB is exact unity: the buffers are untouched")
    func unityIsUntouched() {
        var input = Self.noise()
        input[0][5] = .nan
        input[1][6] = -0.0
        input[2][7] = Float(bitPattern: 3)
        let buffers = ChannelBuffers(input)
        var gain = OutputGain(spec: Self.spec, settings: OutputGainSettings(gain: 0))
        let unity = gain.isUnity
        #expect(unity)
        gain.process(buffers.outputs, frameCount: 2000)
        for c in 0..<3 { #expect(buffers.channel(c).isBitIdentical(to: input[c])) }
    }

    /// A change moves per sample over 20 ms (960 samples at 48 kHz), monotonically, then holds
    /// exactly the new gain.
    @Test("a change ramps per sample over 20 ms")
    func ramp() {
        let ones = [[Float]](repeating: [Float](repeating: 1, count: 3000), count: 3)
        let buffers = ChannelBuffers(ones)
        var gain = OutputGain(spec: Self.spec, settings: OutputGainSettings(gain: -12))
        gain.process(buffers.outputs, frameCount: 100)
        gain.apply(OutputGainSettings(gain: 6))
        gain.process(buffers.outputs(offset: 100), frameCount: 2900)
        let out = buffers.channel(2)
        let start = Float(pow(10, -12 / 20.0)), end = Float(pow(10, 6 / 20.0))
        #expect(out[99] == start)
        #expect(zip(out[100..<1060], out[99..<1059]).allSatisfy { $0 > $1 })   // rising every sample
        #expect(out[1059] == end)
        #expect(out[1060...].allSatisfy { $0 == end })
        let step = Double(end - start) / 960
        #expect(SignalGenerator.maximumJump(out) <= step * 1.001)
    }

    /// Disabling fades to unity over 10 ms, after which the stage is skipped (bit-exact);
    /// enabling fades back in.
    @Test("enable and disable cross-fade, then bypass exactly")
    func bypass() {
        let ones = [[Float]](repeating: [Float](repeating: 1, count: 2000), count: 3)
        let buffers = ChannelBuffers(ones)
        var gain = OutputGain(spec: Self.spec, settings: OutputGainSettings(isEnabled: true, gain: -20))
        gain.process(buffers.outputs, frameCount: 100)
        gain.apply(OutputGainSettings(isEnabled: false, gain: -20))
        gain.process(buffers.outputs(offset: 100), frameCount: 1000)
        let unity = gain.isUnity
        #expect(unity)
        let out = buffers.channel(0)
        #expect(out[99] == Float(0.1))
        #expect(out[579] == 1)                              // 480 samples = 10 ms later
        #expect(SignalGenerator.maximumJump(out) <= 0.9 / 480 * 1.001)
        let input = Self.noise(900)
        let later = ChannelBuffers(input)
        gain.process(later.outputs, frameCount: 900)
        for c in 0..<3 { #expect(later.channel(c).isBitIdentical(to: input[c])) }
    }
}
