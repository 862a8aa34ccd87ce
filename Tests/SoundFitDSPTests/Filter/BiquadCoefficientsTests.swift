import Foundation
import SoundFitDSP
import SoundFitTestSupport
import Testing

@Suite("BiquadCoefficients: the analytic reference")
struct BiquadCoefficientsTests {
    static let cases: [(FilterType, Double, Double, Double, Double)] = {
        var cases: [(FilterType, Double, Double, Double, Double)] = []
        for type in FilterType.allCases {
            for (cutoff, fs) in [(20.0, 96000.0), (50, 44100), (1000, 48000), (10000, 48000), (20000, 44100)] {
                for q in [0.1, 0.7071, 4, 18] {
                    for gain in type.usesGain ? [-24.0, -12, 6, 24] : [0] { cases.append((type, cutoff, q, gain, fs)) }
                }
            }
        }
        return cases
    }()

    @Test("rbj equals the independent cookbook transcription")
    func rbjMatchesCookbook() {
        var worst = 0.0
        for (type, cutoff, q, gain, fs) in Self.cases {
            let c = BiquadCoefficients.rbj(type: type, cutoff: cutoff, q: q, gain: gain, sampleRate: fs)
            let r = CookbookBiquad(kind: type.cookbookKind, f0: cutoff, q: q, dbGain: gain, fs: fs).normalized
            let scale = max(1, abs(r.b0), abs(r.b1), abs(r.b2))
            for (x, y) in [(c.b0, r.b0), (c.b1, r.b1), (c.b2, r.b2), (c.a1, r.a1), (c.a2, r.a2)] {
                worst = max(worst, abs(x - y) / scale)
            }
            #expect(c.isStable)
        }
        #expect(worst < 1e-13)
    }

    @Test("magnitude(atFrequency:) equals the reference's analytic response")
    func magnitudeMatchesCookbook() {
        var worst = 0.0
        for (type, cutoff, q, gain, fs) in Self.cases {
            let c = BiquadCoefficients.rbj(type: type, cutoff: cutoff, q: q, gain: gain, sampleRate: fs)
            let r = CookbookBiquad(kind: type.cookbookKind, f0: cutoff, q: q, dbGain: gain, fs: fs)
            for f in stride(from: 20.0, to: fs / 2, by: 997) {
                let expected = r.magnitudeDecibels(atFrequency: f, fs: fs)
                guard expected > -100 else { continue }
                worst = max(worst, abs(c.magnitudeDecibels(atFrequency: f, sampleRate: fs) - expected))
            }
        }
        #expect(worst < 1e-7)
    }

    @Test("processDouble is the float64 direct-form model")
    func processDoubleMatchesReference() {
        let input = SignalGenerator.whiteNoise(count: 2000, seed: 2)
        let c = BiquadCoefficients.rbj(type: .peak, cutoff: 300, q: 3, gain: 10, sampleRate: 48000)
        let r = CookbookBiquad(kind: .peakingEQ, f0: 300, q: 3, dbGain: 10, fs: 48000).process(input)
        for (x, y) in zip(c.processDouble(input), r) { #expect(abs(x - y) < 1e-12) }
    }

    /// The exact biquad -> SVF conversion and its inverse round-trip for every type.
    @Test("StateVariableParameters round-trips the direct-form coefficients")
    func svfRoundTrip() {
        var worst = 0.0
        for (type, cutoff, q, gain, fs) in Self.cases {
            let c = BiquadCoefficients.rbj(type: type, cutoff: cutoff, q: q, gain: gain, sampleRate: fs)
            let p = StateVariableParameters(c)
            #expect(p.g > 0 && p.k > 0)
            let back = p.biquadCoefficients
            let scale = max(1, abs(c.b0), abs(c.b1), abs(c.b2))
            for (x, y) in [(c.b0, back.b0), (c.b1, back.b1), (c.b2, back.b2), (c.a1, back.a1), (c.a2, back.a2)] {
                worst = max(worst, abs(x - y) / scale)
            }
        }
        #expect(worst < 1e-9)
    }

    @Test("FilterType names")
    func names() {
        #expect(FilterType.allCases.map(\.name) == ["lowpass", "highpass", "bandpass", "notch", "peak", "lowshelf", "highshelf", "allpass"])
        for type in FilterType.allCases { #expect(FilterType(name: type.name) == type) }
        #expect(FilterType(name: "Lowpass") == nil)
        #expect(FilterType(rawValue: 4) == .peak)
    }

    @Test("settings clamp into range")
    func clamping() {
        let f = FilterSettings(isEnabled: true, type: .peak, cutoff: 5, q: .nan, gain: 99).clamped()
        #expect(f.cutoff == 20 && f.q == 0.7071 && f.gain == 24)
        #expect(RingModulatorSettings(frequency: 100, mix: -1).clamped() == RingModulatorSettings(frequency: 40, mix: 0))
        #expect(OutputGainSettings(gain: -100).clamped().gain == -60)
        let defaults = ChainSettings()
        #expect(defaults.filter == FilterSettings(isEnabled: false, type: .lowpass, cutoff: 1000, q: 0.7071, gain: 0))
        #expect(defaults.ringModulator == RingModulatorSettings(isEnabled: false, frequency: 22, mix: 1))
        #expect(defaults.outputGain == OutputGainSettings(isEnabled: true, gain: 0))
    }
}
