import Foundation
import SoundFitDSP
import SoundFitTestSupport
import Testing

/// The masking noise: band level, one-third-octave band and skirts, click-free on/off and level
/// changes, channels, determinism.
@Suite struct NarrowBandNoiseTests {
    let sampleRate = 48000.0

    /// Renders `seconds` of `noise` in 256-frame blocks into `channels` zeroed channels, calling
    /// `change` before each block with the block's first frame.
    private func render(_ noise: inout NarrowBandNoise, seconds: Double, channels: Int = 2,
                        change: (Int, inout NarrowBandNoise) -> Void = { _, _ in }) -> [[Float]] {
        let total = Int(seconds * noise.sampleRate)
        let buffers = ChannelBuffers(channelCount: channels, frameCount: total)
        var offset = 0
        while offset < total {
            change(offset, &noise)
            let frames = min(256, total - offset)
            noise.render(adding: buffers.outputs(offset: offset), channelCount: channels, frameCount: frames)
            offset += frames
        }
        return (0..<channels).map { buffers.channel($0) }
    }

    /// Renders `seconds` of a noise seeded `seed` playing `first`, set to `second` at frame
    /// `changeAt` (a block boundary); the noise after it and the output's `channel`.
    private func renderChange(seed: UInt64, _ first: MaskingNoise, then second: MaskingNoise, at changeAt: Int,
                              seconds: Double, channel: Int) -> (noise: NarrowBandNoise, out: [Float]) {
        var noise = NarrowBandNoise(sampleRate: sampleRate, seed: seed)
        let out = render(&noise, seconds: seconds) { frame, noise in
            if frame == 0 { noise.set(first) }
            if frame == changeAt { noise.set(second) }
        }[channel]
        return (noise, out)
    }

    private func steady(frequency: Double, amplitude: Double, seconds: Double, seed: UInt64 = 1) -> [Float] {
        var noise = NarrowBandNoise(sampleRate: sampleRate, seed: seed)
        noise.set(MaskingNoise(frequency: frequency, ear: .left, amplitude: amplitude))
        let out = render(&noise, seconds: seconds)[0]
        return Array(out[Int(0.1 * sampleRate)...])
    }

    /// Welch power spectral density: Kaiser-windowed segments of 8192 frames, averaged.
    private func psd(_ samples: [Float]) -> (power: [Double], binWidth: Double) {
        let segment = 8192
        var sum: [Double] = []
        var width = 0.0, count = 0
        var start = 0
        while start + segment <= samples.count {
            let (power, binWidth) = Spectrum.powerSpectrum(Array(samples[start..<(start + segment)]), sampleRate: sampleRate)
            if sum.isEmpty { sum = power } else { for k in power.indices { sum[k] += power[k] } }
            width = binWidth
            count += 1
            start += segment / 2
        }
        return (sum.map { $0 / Double(count) }, width)
    }

    /// Mean PSD within ±1/24 octave of `frequency`.
    private func density(_ spectrum: (power: [Double], binWidth: Double), at frequency: Double) -> Double {
        let low = Int(frequency * pow(2, -1.0 / 24) / spectrum.binWidth), high = Int(frequency * pow(2, 1.0 / 24) / spectrum.binWidth)
        let bins = spectrum.power[max(1, low)...max(low + 1, high)]
        return bins.reduce(0, +) / Double(bins.count)
    }

    @Test("Band RMS within ±0.5 dB of the target", arguments: [250.0, 1000, 4000, 8000])
    func bandLevel(frequency: Double) {
        let amplitude = 0.05
        let out = steady(frequency: frequency, amplitude: amplitude, seconds: 10)
        let level = Measurement.decibels(Measurement.rms(out) / amplitude)
        report("masking noise \(Int(frequency)) Hz: band RMS re target \(String(format: "%+.2f", level)) dB")
        #expect(abs(level) <= 0.5, "\(frequency) Hz: \(level) dB")
    }

    @Test("One-third-octave band: −3 dB at f·2^(±1/6), ≥ 65 % of the power inside, ≥ 30 dB down an octave away",
          arguments: [500.0, 1000, 4000])
    func bandShape(frequency: Double) {
        let out = steady(frequency: frequency, amplitude: 0.05, seconds: 12, seed: 7)
        let spectrum = psd(out)
        let centre = density(spectrum, at: frequency)
        let lowEdge = 10 * log10(density(spectrum, at: frequency * pow(2, -1.0 / 6)) / centre)
        let highEdge = 10 * log10(density(spectrum, at: frequency * pow(2, 1.0 / 6)) / centre)
        let octaveDown = 10 * log10(density(spectrum, at: frequency / 2) / centre)
        let octaveUp = 10 * log10(density(spectrum, at: frequency * 2) / centre)
        var inside = 0.0, total = 0.0
        for (k, p) in spectrum.power.enumerated() {
            let f = Double(k) * spectrum.binWidth
            total += p
            if f >= frequency * pow(2, -1.0 / 6) && f <= frequency * pow(2, 1.0 / 6) { inside += p }
        }
        report(String(format: "masking noise %d Hz: edges %.1f / %.1f dB, octave −1/+1 %.1f / %.1f dB, in band %.0f %%",
                      Int(frequency), lowEdge, highEdge, octaveDown, octaveUp, 100 * inside / total))
        #expect(abs(lowEdge + 3) <= 1.5 && abs(highEdge + 3) <= 1.5, "edges \(lowEdge), \(highEdge) dB")
        #expect(inside / total >= 0.65, "only \(inside / total) of the power in the band")
        #expect(octaveDown <= -30 && octaveUp <= -30, "an octave away: \(octaveDown), \(octaveUp) dB")
    }

    /// Energy more than two octaves above `frequency` in `window`, re the window's total (dB).
    private func splatter(_ window: [Float], frequency: Double) -> Double {
        let (power, binWidth) = Spectrum.powerSpectrum(window, sampleRate: sampleRate)
        var band = 0.0, above = 0.0
        for (k, p) in power.enumerated() {
            if Double(k) * binWidth > 4 * frequency { above += p } else { band += p }
        }
        return 10 * log10(above / band)
    }

    @Test("On and off: no click (energy two octaves above the band ≤ −50 dB re the band, a hard gate is not)")
    func onAndOffDoNotClick() {
        let frequency = 1000.0
        var noise = NarrowBandNoise(sampleRate: sampleRate, seed: 3)
        let offAt = 94 * 256 // a block boundary: changes are made between blocks
        let out = render(&noise, seconds: 0.8) { frame, noise in
            if frame == 0 { noise.set(MaskingNoise(frequency: frequency, ear: .left, amplitude: 0.2)) }
            if frame == offAt { noise.set(nil) }
        }[0]
        let ramp = Int(NarrowBandNoise.rampSeconds * sampleRate)
        let onset = Array(out[0..<(2 * ramp)])
        let offset = Array(out[(offAt - ramp)..<(offAt + 2 * ramp)])
        let onsetSplatter = splatter(onset, frequency: frequency)
        let offsetSplatter = splatter(offset, frequency: frequency)
        // Positive control: the same noise cut abruptly.
        var gated = out
        for i in (offAt - ramp)..<gated.count { gated[i] = 0 }
        let gatedSplatter = splatter(Array(gated[(offAt - 2 * ramp)..<(offAt + ramp)]), frequency: frequency)
        report(String(format: "masking noise on %.1f dB, off %.1f dB, hard gate %.1f dB", onsetSplatter, offsetSplatter, gatedSplatter))
        #expect(onsetSplatter <= -50 && offsetSplatter <= -50)
        #expect(gatedSplatter > -50, "the measure cannot see a click: \(gatedSplatter) dB")
        // The ramps: nothing before the first frame, silence from the end of the off ramp.
        #expect(abs(out[0]) < 1e-6)
        #expect(out[(offAt + ramp + 256)...].allSatisfy { $0 == 0 })
        #expect(noise.playing == nil && !noise.isAudible)
    }

    @Test("A level change ramps continuously: no gap, no jump, the new level within 0.5 dB after the ramp")
    func levelChangeIsContinuous() {
        let changeAt = 188 * 256 // a block boundary
        let out = renderChange(seed: 5, MaskingNoise(frequency: 2000, ear: .right, amplitude: 0.02),
                               then: MaskingNoise(frequency: 2000, ear: .right, amplitude: 0.08),
                               at: changeAt, seconds: 6, channel: 1).out
        // Short-time RMS over 5 ms windows around the change: monotone within noise, never near silence.
        let window = Int(0.005 * sampleRate)
        var previous = 0.0, minimum = Double.infinity, largestStep = 0.0
        for start in stride(from: changeAt - 20 * window, to: changeAt + 20 * window, by: window) {
            let rms = Measurement.rms(out[start..<(start + window)])
            minimum = min(minimum, rms)
            if previous > 0 { largestStep = max(largestStep, Measurement.decibels(rms / previous)) }
            previous = rms
        }
        let before = Measurement.rms(out[Int(0.2 * sampleRate)..<changeAt])
        let after = Measurement.rms(out[(changeAt + Int(0.05 * sampleRate))...])
        report(String(format: "level change: before %+.2f dB, after %+.2f dB re target; largest 5 ms step %.1f dB",
                      Measurement.decibels(before / 0.02), Measurement.decibels(after / 0.08), largestStep))
        #expect(minimum > 0.02 * 0.3, "the noise dipped during the change: \(minimum)")
        #expect(abs(Measurement.decibels(after / 0.08)) <= 0.5)
        #expect(abs(Measurement.decibels(before / 0.02)) <= 0.75)
        // The whole 12 dB change is spread over the 25 ms ramp: no 5 ms step takes it at once (a hard
        // step at `changeAt`, a window boundary, would show as one 12 dB step).
        #expect(largestStep < 9, "a 5 ms step of \(largestStep) dB")
    }

    @Test func onlyTheMaskedEarsChannelsCarryTheNoiseAndMonoCarriesNone() {
        var noise = NarrowBandNoise(sampleRate: sampleRate)
        noise.set(MaskingNoise(frequency: 1000, ear: .right, amplitude: 0.1))
        let out = render(&noise, seconds: 0.3, channels: 5)
        for channel in [0, 2, 4] { #expect(out[channel].allSatisfy { $0 == 0 }, "channel \(channel + 1) (left ear)") }
        for channel in [1, 3] { #expect(Measurement.rms(out[channel]) > 0.05, "channel \(channel + 1) (right ear)") }
        #expect(out[1] == out[3], "the ear's channels carry different noise")
        var mono = NarrowBandNoise(sampleRate: sampleRate)
        mono.set(MaskingNoise(frequency: 1000, ear: .left, amplitude: 0.1))
        #expect(render(&mono, seconds: 0.2, channels: 1)[0].allSatisfy { $0 == 0 })
    }

    @Test func sameSeedSameNoiseOtherSeedOtherNoise() {
        let a = steady(frequency: 1000, amplitude: 0.1, seconds: 0.5, seed: 11)
        let b = steady(frequency: 1000, amplitude: 0.1, seconds: 0.5, seed: 11)
        let c = steady(frequency: 1000, amplitude: 0.1, seconds: 0.5, seed: 12)
        #expect(a == b)
        #expect(a != c)
    }

    @Test("A band switch ramps down, then up on the new band: no gap longer than two ramps")
    func bandSwitch() {
        let switchAt = 94 * 256 // a block boundary
        let (noise, out) = renderChange(seed: 9, MaskingNoise(frequency: 1000, ear: .left, amplitude: 0.05),
                                        then: MaskingNoise(frequency: 4000, ear: .left, amplitude: 0.05),
                                        at: switchAt, seconds: 3, channel: 0)
        let ramp = Int(NarrowBandNoise.rampSeconds * sampleRate)
        let silent = out[switchAt..<(switchAt + 3 * ramp)].filter { $0 == 0 }.count
        #expect(silent <= 2, "\(silent) silent frames at the switch")
        let after = Array(out[(switchAt + 3 * ramp)...])
        #expect(abs(Measurement.decibels(Measurement.rms(after) / 0.05)) <= 0.5)
        let spectrum = psd(after)
        #expect(density(spectrum, at: 4000) > 1000 * density(spectrum, at: 1000), "the band did not move to 4 kHz")
        #expect(noise.playing?.frequency == 4000)
    }

    @Test("A sample-rate change keeps the noise on, at its level, at the new rate")
    func sampleRateChange() {
        var noise = NarrowBandNoise(sampleRate: 48000, seed: 2)
        noise.set(MaskingNoise(frequency: 1000, ear: .left, amplitude: 0.05))
        _ = render(&noise, seconds: 0.5)
        noise.setSampleRate(96000)
        let out = render(&noise, seconds: 6)[0]
        #expect(abs(out[0]) < 1e-6, "no ramp after the rate change")
        let level = Measurement.decibels(Measurement.rms(out[9600...]) / 0.05)
        #expect(abs(level) <= 0.5, "\(level) dB at 96 kHz")
    }
}
