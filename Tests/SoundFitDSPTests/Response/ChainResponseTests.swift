import Foundation
import SoundFitDSP
import SoundFitModel
import SoundFitTestSupport
import Testing

@Suite("ChainResponse: the chain's response from its design")
struct ChainResponseTests {
    static let fs = 48000.0

    /// The curve's filter part is the independent cookbook reference, for every type, plus the
    /// output gain; the ring modulator is flagged, not included.
    @Test("filter and gain: the cookbook formulas plus the gain, every type", arguments: FilterType.allCases)
    func matchesCookbook(type: FilterType) {
        let filter = FilterSettings(isEnabled: true, type: type, cutoff: 2500, q: 2, gain: 9)
        let settings = ChainSettings(filter: filter, ringModulator: RingModulatorSettings(isEnabled: true),
                                     outputGain: OutputGainSettings(gain: -6))
        let response = ChainResponse(settings: settings, sampleRate: Self.fs, personalization: nil, points: 256)
        let reference = filter.cookbook(sampleRate: Self.fs)
        var worst = 0.0
        for (index, f) in response.frequencies.enumerated() {
            let expected = reference.magnitudeDecibels(atFrequency: f, fs: Self.fs) - 6
            guard expected > -100 else { continue }
            worst = max(worst, abs(response.left[index] - expected), abs(response.right[index] - expected))
        }
        #expect(worst < 1e-6, "\(type.name): \(worst) dB from the cookbook")
        #expect(response.filter == .included && response.outputGain == .included)
        #expect(response.ringModulator == .excluded && response.personalization == .bypassed)
    }

    /// The check: lowpass 1 kHz, Q 0.7071, 48 kHz reads −3.0 dB at 1 kHz and −24.5 dB at 4 kHz.
    @Test("lowpass 1 kHz: −3.0 dB at 1 kHz, −24.5 dB at 4 kHz; frequencies log-spaced 20 Hz–20 kHz")
    func lowpassPoints() {
        let coefficients = FilterSettings(isEnabled: true, type: .lowpass, cutoff: 1000, q: 0.7071)
            .steadyCoefficients(sampleRate: Self.fs)
        #expect(abs(coefficients.magnitudeDecibels(atFrequency: 1000, sampleRate: Self.fs) + 3.0) < 0.1)
        #expect(abs(coefficients.magnitudeDecibels(atFrequency: 4000, sampleRate: Self.fs) + 24.5) < 0.5)
        let frequencies = ChainResponse.logFrequencies(count: 128)
        #expect(frequencies.count == 128)
        #expect(abs(frequencies[0] - 20) < 1e-9 && abs(frequencies[127] - 20000) < 1e-6)
        let ratios = zip(frequencies.dropFirst(), frequencies).map { $0 / $1 }
        #expect(ratios.allSatisfy { abs($0 - ratios[0]) < 1e-9 })
    }

    /// Bypassed stages contribute 0 dB: the default chain is flat.
    @Test("every stage bypassed: 0 dB everywhere")
    func bypassedIsFlat() {
        let response = ChainResponse(settings: ChainSettings(), sampleRate: Self.fs, personalization: nil)
        #expect(response.left.allSatisfy { $0 == 0 } && response.right.allSatisfy { $0 == 0 })
        #expect(response.filter == .bypassed && response.ringModulator == .bypassed && response.outputGain == .bypassed)
    }

    /// The filter kernel, measured (multitone through the float32 kernel), agrees with the curve.
    @Test("the measured filter kernel agrees with the curve within 0.1 dB", arguments: [FilterType.lowpass, .peak, .highshelf])
    func measuredKernel(type: FilterType) {
        let filter = FilterSettings(isEnabled: true, type: type, cutoff: 1000, q: 0.7071, gain: 6)
        let frequencies = [50.0, 300, 1000, 2000, 4000, 9000]
        let probe = ResponseProbe(sampleRate: Self.fs, frequencies: frequencies)
        var kernel = BiquadFilter(spec: ProcessingSpec(sampleRate: Self.fs, maximumFrameCount: 512, channelCount: 1),
                                  settings: filter)
        let measured = probe.measure(&kernel).decibels
        let coefficients = filter.steadyCoefficients(sampleRate: Self.fs)
        for (f, dB) in zip(frequencies, measured) {
            let curve = coefficients.magnitudeDecibels(atFrequency: f, sampleRate: Self.fs)
            #expect(abs(dB - curve) < 0.1, "\(type.name) at \(f) Hz: measured \(dB), curve \(curve)")
        }
    }

    /// The personalization part: a linear preset (20 dB at 1 kHz, others 5 dB) at intensity 0.5,
    /// measured with sines through the real processor, agrees with the curve at the applied gains.
    @Test("personalization at intensity 0.5: sines through the processor agree with the curve within 0.3 dB")
    func personalizationMatchesProcessor() throws {
        let layout = MultibandLayout(techLevel: 3)!
        let gains = layout.bandCentres.map { $0 == 1000 ? 20.0 : 5.0 }
        let preset = PresetPayload(techLevel: Personalization.level(3), bands: zip(layout.bandCentres, gains).map {
            BandDynamics(centre: $0, gain: $1)
        })
        var chain = try Personalization.chain(preset, channels: 2, intensity: 0.5)
        defer { Personalization.finish(&chain) }
        let applied = gains.map { PersonalizationResponse.appliedGain(lawGain: $0, intensity: 0.5) }
        #expect(abs(applied[2] - 20 * log10(5.5)) < 1e-9)
        let bandGains = try #require(PersonalizationBandGains(techLevel: 3, left: applied, right: applied))
        let settings = ChainSettings(personalization: PersonalizationSettings(isEnabled: true, intensity: 0.5))
        let frequencies = [200.0, 700, 1000, 1300, 2500, 8000]
        let response = ChainResponse(settings: settings, sampleRate: Self.fs, personalization: bandGains,
                                     frequencies: frequencies)
        #expect(response.personalization == .included)
        for (index, f) in frequencies.enumerated() {
            let measured = Personalization.sineGain(&chain, channels: 2, frequency: f, level: 60)
            let curve = response.left[index]
            #expect(response.right[index] == curve)
            for (channel, dB) in measured.enumerated() {
                #expect(abs(dB - curve) < 0.3, "channel \(channel + 1) at \(f) Hz: measured \(dB) dB, curve \(curve) dB")
            }
        }
    }

    /// The band gains the processor reports (`bandMeter`) are the applied ones, and a
    /// compressing band reports its gain reduction.
    @Test("band meters: applied gains after intensity, gain reduction above the knee")
    func bandMeters() throws {
        // Ratio 2 above a 35 dB SPL knee, 20 dB at a 60 dB SPL reference: at 80 dB SPL the gain
        // is 10 dB, 22.5 dB below the law's gain at the knee (32.5 dB).
        let preset = Personalization.uniformPreset(techLevel: 1, gain: 20, ratio: 2)
        var chain = try Personalization.chain(preset, channels: 2, intensity: 1)
        defer { Personalization.finish(&chain) }
        _ = Personalization.sineGain(&chain, channels: 2, frequency: 1000, level: 80)
        #expect(chain.meteredBandCount == 4)
        let meter = chain.personalizationBandMeter(channel: 1, band: 1)
        #expect(abs(Double(meter.gain) - 10) < 0.5, "1 kHz band gain \(meter.gain)")
        #expect(abs(Double(meter.reduction) - 22.5) < 0.5, "1 kHz band reduction \(meter.reduction)")
        var linear = try Personalization.chain(Personalization.uniformPreset(techLevel: 1, gain: 20), channels: 1, intensity: 0.5)
        defer { Personalization.finish(&linear) }
        _ = Personalization.sineGain(&linear, channels: 1, frequency: 1000, level: 80)
        let flat = linear.personalizationBandMeter(channel: 0, band: 1)
        #expect(abs(Double(flat.gain) - 20 * log10(5.5)) < 0.05 && flat.reduction == 0)
    }

    /// Downward expansion of a quiet band lowers its gain, but a compressor's meter shows no
    /// reduction for it: only compression and the output limit count.
    @Test("band meters: expansion below its knee is not gain reduction")
    func expansionIsNotReduction() throws {
        // 2:1 expansion below 30 dB SPL: a 15 dB SPL tone loses 15 dB of gain to the expander.
        let preset = Personalization.uniformPreset(techLevel: 1, gain: 20, ratio: 2, expansionKnee: 30, expansionRatio: 2)
        var chain = try Personalization.chain(preset, channels: 2, intensity: 1)
        defer { Personalization.finish(&chain) }
        _ = Personalization.sineGain(&chain, channels: 2, frequency: 1000, level: 15)
        let meter = chain.personalizationBandMeter(channel: 0, band: 1)
        #expect(Double(meter.gain) < 32.5 - 10, "the expander lowers the 1 kHz band's gain: \(meter.gain) dB")
        #expect(abs(Double(meter.reduction)) < 0.5, "1 kHz band reduction \(meter.reduction) dB")
    }
}
