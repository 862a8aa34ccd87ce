import Foundation
import SoundFitDSP
import SoundFitTestSupport
import Testing

/// One output limiter per ear, clean — ears independent, no lasting dip after a
/// limited onset, low distortion on a low tone held over the ceiling, never a sample above it.
@Suite struct OutputLimiterEarTests {
    let fs = 48000.0

    /// Runs `limiter` over `channels` in blocks of `block` frames, in place.
    private func run(_ limiter: inout OutputLimiter, _ channels: [[Float]], block: Int = 128) -> [[Float]] {
        let frames = channels[0].count
        let buffers = ChannelBuffers(channelCount: channels.count, frameCount: frames)
        for (index, samples) in channels.enumerated() { buffers.set(channel: index, samples) }
        var offset = 0
        while offset < frames {
            let count = min(block, frames - offset)
            limiter.process(buffers.outputs(offset: offset), channelCount: channels.count, frameCount: count)
            offset += count
        }
        return (0..<channels.count).map { buffers.channel($0) }
    }

    private func sine(_ frequency: Double, amplitude: Double, count: Int) -> [Float] {
        (0..<count).map { Float(amplitude * sin(2 * .pi * frequency * Double($0) / fs)) }
    }

    private func decibels(_ x: Double) -> Double { 20 * log10(x) }

    @Test("A loud left ear does not move the right ear (≤ 0.5 dB; here not at all), mono and odd counts are the left ear")
    func earsAreIndependent() {
        // Calibration 100 dB SPL at full scale, ceiling 90 dB SPL: a 100 dB SPL 1 kHz tone left,
        // a 70 dB SPL 500 Hz tone right.
        let ceiling = OutputLimiter.ceiling(maximumSPL: 90, fullScaleSPL: 100)
        let loud = sine(1000, amplitude: 1, count: 48000)
        let quiet = sine(500, amplitude: pow(10, -30 / 20), count: 48000)
        var limiter = OutputLimiter(ceiling: ceiling, sampleRate: fs)
        let out = run(&limiter, [loud, quiet])
        let leftPeak = Double(out[0].map(abs).max()!), rightPeak = Double(out[1].map(abs).max()!)
        let rightChange = decibels(rightPeak / Double(quiet.map(abs).max()!))
        report("ears: left peak \(String(format: "%.2f", decibels(leftPeak))) dBFS (ceiling \(String(format: "%.2f", decibels(Double(ceiling))))), right changed by \(String(format: "%.3f", rightChange)) dB")
        #expect(leftPeak <= Double(ceiling))
        #expect(decibels(leftPeak) > decibels(Double(ceiling)) - 0.1, "the left ear is held at the ceiling")
        #expect(abs(rightChange) <= 0.5)
        #expect(out[1] == quiet, "below its ceiling the right ear is untouched, bit for bit")

        // Swapped: the right ear loud, the left untouched.
        var swapped = OutputLimiter(ceiling: ceiling, sampleRate: fs)
        let back = run(&swapped, [quiet, loud])
        #expect(back[0] == quiet)
        #expect(Double(back[1].map(abs).max()!) <= Double(ceiling))

        // Mono is the left ear: its ceiling holds.
        var mono = OutputLimiter(sampleRate: fs)
        mono.setCeilings(left: ceiling, right: 1)
        #expect(Double(run(&mono, [loud])[0].map(abs).max()!) <= Double(ceiling))

        // Three channels: 1 and 3 are the left ear (linked), 2 the right.
        var three = OutputLimiter(ceiling: ceiling, sampleRate: fs)
        let triple = run(&three, [quiet, quiet, loud])
        #expect(triple[1] == quiet)
        #expect(triple[0] != quiet, "the lone third channel is the left ear: it ducks channel 1")
        #expect(Double(triple[2].map(abs).max()!) <= Double(ceiling))
    }

    @Test("Each ear holds its own ceiling")
    func ceilingsPerEar() {
        var limiter = OutputLimiter(sampleRate: fs)
        limiter.setCeilings(left: 0.25, right: 0.5)
        let noise = SignalGenerator.whiteNoise(count: 24000, amplitude: 2, seed: 11)
        let out = run(&limiter, [noise, noise])
        let left = out[0].map(abs).max()!, right = out[1].map(abs).max()!
        #expect(left <= 0.25 && left > 0.24)
        #expect(right <= 0.5 && right > 0.49)
        let reductions = limiter.largestReductions
        #expect(reductions.left < reductions.right)
    }

    @Test("Never a sample above the ceiling: random loud input, random ceilings and block sizes, 4 channels")
    func neverAboveOverRandomInput() {
        var generator = SeededRandom(seed: 23)
        for trial in 0..<12 {
            let left = Float.random(in: 0.01...1, using: &generator), right = Float.random(in: 0.01...1, using: &generator)
            var limiter = OutputLimiter(sampleRate: fs)
            limiter.setCeilings(left: left, right: right)
            let frames = 24000
            // Bursts of noise and tones from −20 to +30 dB re the ceiling, changing every 5–50 ms.
            var channels = [[Float]](repeating: [], count: 4)
            while channels[0].count < frames {
                let length = Int.random(in: 240...2400, using: &generator)
                let gain = Float(pow(10, Double.random(in: -20...30, using: &generator) / 20))
                let frequency = Double.random(in: 40...8000, using: &generator)
                for c in 0..<4 {
                    let ceiling = c % 2 == 0 ? left : right
                    let burst: [Float] = Bool.random(using: &generator)
                        ? SignalGenerator.whiteNoise(count: length, amplitude: Double(gain * ceiling), seed: UInt64(trial * 10 + c))
                        : sine(frequency, amplitude: Double(gain * ceiling), count: length)
                    channels[c] += burst
                }
            }
            let out = run(&limiter, channels.map { Array($0.prefix(frames)) }, block: Int.random(in: 1...512, using: &generator))
            for c in 0..<4 {
                let ceiling = c % 2 == 0 ? left : right
                let peak = out[c].map(abs).max()!
                #expect(peak <= ceiling, "trial \(trial) channel \(c): peak \(peak) over ceiling \(ceiling)")
            }
        }
    }

    @Test("THD+N ≤ 1 % for a 100 Hz sine 10 dB over the ceiling (and at 50 Hz)", arguments: [100.0, 50.0])
    func lowToneDistortion(frequency: Double) {
        let ceiling: Float = 0.1
        let input = sine(frequency, amplitude: Double(ceiling) * pow(10, 10.0 / 20), count: 48000)
        var limiter = OutputLimiter(ceiling: ceiling, sampleRate: fs)
        let out = run(&limiter, [input])
        // The steady part: from 0.5 s on (the onset is limited at once, then held).
        let steady = Array(out[0][24000...])
        let thdn = Personalization.thdPlusNoise(steady, frequency: frequency)
        let percent = 100 * pow(10, thdn / 20)
        let peak = Double(steady.map(abs).max()!)
        report("limiter THD+N at \(Int(frequency)) Hz, 10 dB over the ceiling: \(String(format: "%.4f", percent)) % (\(String(format: "%.1f", thdn)) dB); peak \(String(format: "%.3f", decibels(peak / Double(ceiling)))) dB re ceiling")
        #expect(percent <= 1)
        #expect(peak <= Double(ceiling))
        #expect(decibels(peak / Double(ceiling)) > -0.1, "the tone is held at the ceiling, not below")
    }

    /// The output's envelope: the peak of every 1 ms (two periods of 2 kHz).
    private func envelope(_ samples: ArraySlice<Float>) -> [Double] {
        stride(from: samples.startIndex, to: samples.endIndex - 47, by: 48).map { start in
            Double(samples[start..<(start + 48)].map(abs).max()!)
        }
    }

    @Test("After a 55→90 dB SPL step through a compressing N3 preset the output never falls more than 3 dB below its steady value from 10 ms on",
          arguments: [3, 4], [-6.0, -3.0, 0.0, 3.0])
    func noDipAfterAStep(techLevel: Int, ceilingReSteady: Double) throws {
        // 2 kHz tone (ANSI S3.22), calibration 100 dB SPL at full scale: 55 dB SPL for 1 s, then 90.
        let step = 48000, total = 48000 + 24000
        let low = Personalization.amplitude(level: 55), high = Personalization.amplitude(level: 90)
        let tone: [Float] = (0..<total).map { n in
            Float((n < step ? low : high) * sin(2 * .pi * 2000 * Double(n) / fs))
        }
        // The steady output at 90 dB SPL without a ceiling, to place the ceiling around it.
        var free = try Personalization.chain(Personalization.n3Preset(techLevel: techLevel))
        defer { Personalization.finish(&free) }
        let unlimited = runChain(&free, [tone, tone]).channel(0)
        let steadyFree = envelope(unlimited[(total - 4800)...]).max()!
        let overshoot = envelope(unlimited[step...]).max()!
        let ceiling = Float(steadyFree * pow(10, ceilingReSteady / 20))

        var chain = try Personalization.chain(Personalization.n3Preset(techLevel: techLevel))
        defer { Personalization.finish(&chain) }
        chain.setOutputCeiling(ceiling)
        let out = runChain(&chain, [tone, tone]).channel(0)
        let steady = envelope(out[(total - 4800)...]).max()!
        let after = envelope(out[(step + 480)..<(step + 4800)])   // 10 ms to 100 ms after the step
        let deepest = decibels(after.min()! / steady)
        let freeAfter = envelope(unlimited[(step + 480)..<(step + 4800)])
        let freeDeepest = decibels(freeAfter.min()! / steadyFree)
        report("  without the limiter: deepest \(String(format: "%.2f", freeDeepest)) dB; envelope (dB re steady) every 5 ms from the step: "
               + stride(from: 0, to: 100, by: 5).map { String(format: "%.1f", decibels(envelope(unlimited[(step + 48 * $0)..<(step + 48 * $0 + 48)])[0] / steadyFree)) }.joined(separator: " "))
        report("  with: " + stride(from: 0, to: 100, by: 5).map { String(format: "%.1f", decibels(envelope(out[(step + 48 * $0)..<(step + 48 * $0 + 48)])[0] / steady)) }.joined(separator: " "))
        report("step 55→90 dB SPL, N3 level \(techLevel), ceiling \(String(format: "%+.0f", ceilingReSteady)) dB re steady (compressor overshoot \(String(format: "%.1f", decibels(overshoot / steadyFree))) dB): deepest dip from 10 ms \(String(format: "%.2f", deepest)) dB")
        #expect(deepest >= -3, "the output dips \(deepest) dB below its steady value after 10 ms")
        #expect(Double(out.map(abs).max()!) <= Double(ceiling))
    }
}
