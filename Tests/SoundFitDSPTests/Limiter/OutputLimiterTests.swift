import Foundation
import SoundFitDSP
import SoundFitTestSupport
import Testing

/// The output safety limit: never above the ceiling, untouched below it.
@Suite struct OutputLimiterTests {
    let sampleRate = 48000.0

    private func limit(_ channels: [[Float]], ceiling: Float) -> ([[Float]], Float) {
        var limiter = OutputLimiter(ceiling: ceiling, sampleRate: sampleRate)
        let frames = channels[0].count
        let buffers = ChannelBuffers(channelCount: channels.count, frameCount: frames)
        for (index, samples) in channels.enumerated() { buffers.set(channel: index, samples) }
        var offset = 0
        while offset < frames {
            let count = min(128, frames - offset)
            limiter.process(buffers.outputs(offset: offset), channelCount: channels.count, frameCount: count)
            offset += count
        }
        return ((0..<channels.count).map { buffers.channel($0) }, limiter.takeLargestReduction())
    }

    @Test("A loud tone complex and loud noise never exceed the ceiling")
    func neverAboveTheCeiling() {
        let ceiling = Float(OutputLimiter.ceiling(maximumSPL: 100, fullScaleSPL: 110))
        #expect(abs(Double(ceiling) - 0.316228) < 1e-5)
        let complex = SignalGenerator.multiTone(frequencies: [250, 500, 1000, 2000, 4000, 6000], amplitude: 0.3,
                                                sampleRate: sampleRate, count: 48000, seed: 3)
        let noise = SignalGenerator.whiteNoise(count: 48000, amplitude: 1.5, seed: 4)
        // Channels 1 and 3 are the left ear, 2 and 4 the right (the chain's pairs).
        let (out, reduction) = limit([complex, noise, noise, complex], ceiling: ceiling)
        let peak = out.flatMap { $0 }.map(abs).max() ?? 0
        report("limiter: input peaks \(complex.map(abs).max()!), \(noise.map(abs).max()!); output peak \(peak) (ceiling \(ceiling)); largest reduction \(String(format: "%.1f", 20 * log10(Double(reduction)))) dB")
        #expect(peak <= ceiling)
        #expect(reduction < 0.5)
        // Linked within an ear: where one of its channels is limited, both get the same gain.
        let index = (0..<48000).first { abs(noise[$0]) > 1.2 }!
        #expect(abs(out[0][index] / complex[index] - out[2][index] / noise[index]) < 1e-5)
        #expect(abs(out[1][index] / noise[index] - out[3][index] / complex[index]) < 1e-5)
    }

    @Test("Below the ceiling the output is the input, bit for bit")
    func transparentBelowTheCeiling() {
        let input = SignalGenerator.whiteNoise(count: 24000, amplitude: 0.3, seed: 5)
        let (out, reduction) = limit([input, input], ceiling: 0.31)
        #expect(out[0] == input && out[1] == input)
        #expect(reduction == 1)
    }

    @Test("After a burst the gain recovers and quiet samples pass untouched again")
    func recovers() {
        var signal = SignalGenerator.whiteNoise(count: 4800, amplitude: 2, seed: 6)
        signal += SignalGenerator.whiteNoise(count: 43200, amplitude: 0.1, seed: 7)
        let (out, _) = limit([signal], ceiling: 0.5)
        #expect(out[0].map(abs).max()! <= 0.5)
        // 0.5 s after the burst (far beyond the hold and release) the quiet part is untouched.
        #expect(Array(out[0][28800...]) == Array(signal[28800...]))
    }
}
