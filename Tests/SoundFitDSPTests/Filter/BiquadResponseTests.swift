import Foundation
import SoundFitDSP
import SoundFitTestSupport
import Testing

@Suite("BiquadFilter: measured magnitude response")
struct BiquadResponseTests {
    /// Every type, cutoffs 50/1000/10000 Hz, Q 0.5/0.7071/4, gains ±12 dB (peak, shelves), at
    /// ~30 frequencies from 20 Hz to 20 kHz: the response measured on the float32 kernel is within
    /// 0.1 dB of the analytic response of the independent cookbook reference. Points where the
    /// analytic response is below −60 dB (deep stop bands, notch centres) are skipped: a 0.1 dB
    /// tolerance means nothing that far down.
    @Test("response within 0.1 dB of the cookbook", arguments: [44100.0, 48000.0, 96000.0])
    func responseMatchesCookbook(sampleRate: Double) {
        let probe = ResponseProbe(sampleRate: sampleRate, frequencies: responseFrequencies(sampleRate: sampleRate))
        var worst = 0.0, worstAt = "", checked = 0, skipped = 0
        for settings in filterSettingsGrid() {
            let reference = settings.cookbook(sampleRate: sampleRate)
            var filter = BiquadFilter(
                spec: ProcessingSpec(sampleRate: sampleRate, maximumFrameCount: 512, channelCount: 2),
                settings: settings)
            let (measured, identical) = probe.measure(&filter, channelCount: 2)
            #expect(identical, "channels differ for \(settings)")
            for (f, dB) in zip(probe.frequencies, measured) {
                let expected = reference.magnitudeDecibels(atFrequency: f, fs: sampleRate)
                guard expected > -60 else { skipped += 1; continue }
                checked += 1
                let error = abs(dB - expected)
                if error > worst {
                    worst = error
                    worstAt = "\(settings.type.name) fc \(settings.cutoff) Q \(settings.q) gain \(settings.gain) at \(f) Hz"
                }
            }
        }
        report("response @\(Int(sampleRate)) Hz: worst error \(String(format: "%.5f", worst)) dB (\(worstAt)); \(checked) points checked, \(skipped) below -60 dB skipped")
        #expect(worst <= 0.1)
        #expect(checked > 2000)
    }

    /// Closed-form facts of the cookbook designs, independent of any coefficient formula:
    /// |H(f0)| = Q for low- and high-pass, 0 dB for the band-pass, the gain for the peak, half the
    /// gain (in dB) for the shelves at f0, the full gain at DC (low shelf) and near Nyquist (high
    /// shelf), unity everywhere for the all-pass, and a deep notch at f0.
    @Test("closed-form values at the cutoff")
    func closedFormValues() {
        let fs = 48000.0, f0: Float = 1000
        let probe = ResponseProbe(sampleRate: fs, frequencies: [20, 100, 1000, 5000, 20000])
        func measure(_ type: FilterType, q: Float = 0.7071, gain: Float = 0) -> [Double] {
            var filter = BiquadFilter(spec: ProcessingSpec(sampleRate: fs, maximumFrameCount: 256, channelCount: 1),
                                      settings: FilterSettings(isEnabled: true, type: type, cutoff: f0, q: q, gain: gain))
            return probe.measure(&filter).decibels
        }
        let tolerance = 0.01
        for q: Float in [0.5, 2, 8] {
            #expect(abs(measure(.lowpass, q: q)[2] - 20 * log10(Double(q))) < tolerance)
            #expect(abs(measure(.highpass, q: q)[2] - 20 * log10(Double(q))) < tolerance)
            #expect(abs(measure(.bandpass, q: q)[2]) < tolerance)
        }
        for gain: Float in [-18, 6, 24] {
            #expect(abs(measure(.peak, q: 3, gain: gain)[2] - Double(gain)) < tolerance)
            let low = measure(.lowshelf, gain: gain), high = measure(.highshelf, gain: gain)
            #expect(abs(low[2] - Double(gain) / 2) < tolerance)
            #expect(abs(high[2] - Double(gain) / 2) < tolerance)
            #expect(abs(low[0] - Double(gain)) < 0.05)       // 20 Hz: within 0.05 dB of the DC gain
            #expect(abs(high[4] - Double(gain)) < 0.05)      // 20 kHz: within 0.05 dB of the Nyquist gain
        }
        for dB in measure(.allpass, q: 2) { #expect(abs(dB) < tolerance) }
        #expect(measure(.notch, q: 2)[2] < -60)
    }

    /// After `setSampleRate`, the response is the design at the new rate (a kernel that kept its
    /// old coefficients would be an octave off at 96 kHz).
    @Test("setSampleRate recomputes the coefficients")
    func sampleRateChange() {
        let settings = FilterSettings(isEnabled: true, type: .peak, cutoff: 2000, q: 2, gain: 9)
        var filter = BiquadFilter(spec: ProcessingSpec(sampleRate: 48000, maximumFrameCount: 256, channelCount: 2),
                                  settings: settings)
        let warmup = ChannelBuffers([SignalGenerator.whiteNoise(count: 4800, seed: 3), SignalGenerator.whiteNoise(count: 4800, seed: 4)])
        filter.process(warmup.outputs, frameCount: 4800)
        filter.setSampleRate(96000)
        let rate = filter.spec.sampleRate
        #expect(rate == 96000)
        let probe = ResponseProbe(sampleRate: 96000, frequencies: responseFrequencies(sampleRate: 96000, cutoffs: [2000]))
        let measured = probe.measure(&filter, channelCount: 2).decibels
        let reference = settings.cookbook(sampleRate: 96000)
        var worst = 0.0
        for (f, dB) in zip(probe.frequencies, measured) {
            worst = max(worst, abs(dB - reference.magnitudeDecibels(atFrequency: f, fs: 96000)))
        }
        report("after setSampleRate(96000): worst response error \(String(format: "%.5f", worst)) dB")
        #expect(worst <= 0.1)
        // The old-rate design would be far off at the centre (control: the test can fail).
        let stale = CookbookBiquad(kind: .peakingEQ, f0: 1000, q: 2, dbGain: 9, fs: 96000)
        #expect(abs(stale.magnitudeDecibels(atFrequency: 2000, fs: 96000) - 9) > 1)
    }

    /// Cutoffs above 0.49·fs are clamped below Nyquist instead of producing an unstable or
    /// undefined design (20 kHz at 22.05 kHz sampling).
    @Test("cutoff above Nyquist at a low sample rate stays stable")
    func cutoffClampedBelowNyquist() {
        var filter = BiquadFilter(spec: ProcessingSpec(sampleRate: 22050, maximumFrameCount: 256, channelCount: 1),
                                  settings: FilterSettings(isEnabled: true, type: .lowpass, cutoff: 20000, q: 4))
        let coefficients = filter.currentCoefficients
        #expect(coefficients.isStable)
        let buffers = ChannelBuffers([SignalGenerator.whiteNoise(count: 22050, seed: 9)])
        filter.process(buffers.outputs, frameCount: 22050)
        let out = buffers.channel(0)
        #expect(out.allSatisfy { $0.isFinite && abs($0) < 10 })
    }
}
