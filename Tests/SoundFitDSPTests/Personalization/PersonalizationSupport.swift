import Foundation
import SoundFitDSP
import SoundFitModel
import SoundFitTestSupport

/// Presets and runners shared by the personalization tests.
enum Personalization {
    static let fs = 48000.0

    /// Tech level `value` (1…4), for presets written in a test.
    static func level(_ value: Int) -> TechLevel {
        guard let level = try? TechLevel(value) else { preconditionFailure("tech level \(value) is outside 1…4") }
        return level
    }

    /// Every band with the same law.
    static func uniformPreset(techLevel: Int, gain: Double, referenceLevel: Double = 60, ratio: Double = 1,
                              knee: Double = 35, expansionKnee: Double? = nil, expansionRatio: Double = 1,
                              outputLimit: Double = 140, calibration: Double = 100) -> PresetPayload {
        let layout = MultibandLayout(techLevel: techLevel)!
        let bands = layout.bandCentres.map {
            BandDynamics(centre: $0, gain: gain, referenceLevel: referenceLevel, ratio: ratio, knee: knee,
                         expansionKnee: expansionKnee, expansionRatio: expansionRatio, maximumGain: 60,
                         outputLimit: outputLimit)
        }
        return PresetPayload(techLevel: level(techLevel), calibration: calibration, bands: bands)
    }

    /// A prescription for the standard audiogram N3 in the shape of SoundFit's generation rule:
    /// NAL-R gains, ratio 1 + (HL − 20)/50, knee at reference − 25 dB, 2:1 expansion 20 dB below the
    /// knee and a 105 dB SPL limit at tech levels ≥ 3; right ear 3 dB less gain than left.
    static func n3Preset(techLevel: Int) -> PresetPayload {
        let layout = MultibandLayout(techLevel: techLevel)!
        let nalFrequencies = [250.0, 500, 1000, 1500, 2000, 3000, 4000, 6000]
        let nalGains = [0.1, 9.1, 19.6, 21.2, 20.8, 21.3, 22.9, 24.4]
        let hlFrequencies = StandardAudiogramLevels.frequencies, hl = StandardAudiogramLevels.levels("N3")
        let octaveSpeech: [(Double, Double)] = [(125, 52), (250, 60), (500, 61), (1000, 54), (2000, 48), (4000, 45), (8000, 40), (16000, 30)]
        func interpolate(_ xs: [Double], _ ys: [Double], _ x: Double) -> Double {
            let lx = log2(x)
            if lx <= log2(xs[0]) { return ys[0] }
            for i in 1..<xs.count where lx <= log2(xs[i]) {
                let t = (lx - log2(xs[i - 1])) / (log2(xs[i]) - log2(xs[i - 1]))
                return ys[i - 1] + t * (ys[i] - ys[i - 1])
            }
            return ys[ys.count - 1]
        }
        let centres = layout.bandCentres
        func bands(gainShift: Double) -> [BandDynamics] {
            centres.enumerated().map { index, centre in
                let below = index > 0 ? centres[index - 1] : centre * centre / centres[index + 1]
                let above = index + 1 < centres.count ? centres[index + 1] : centre * centre / below
                let reference = interpolate(octaveSpeech.map(\.0), octaveSpeech.map(\.1), centre)
                    + 10 * log10((log2(above) - log2(below)) / 2)
                let knee = reference - 25
                return BandDynamics(
                    centre: centre, gain: max(0, min(40, interpolate(nalFrequencies, nalGains, centre) + gainShift)),
                    referenceLevel: reference,
                    ratio: techLevel >= 2 ? min(3, 1 + max(0, interpolate(hlFrequencies, hl, centre) - 20) / 50) : 1,
                    knee: knee, expansionKnee: techLevel >= 3 ? max(0, knee - 20) : nil, expansionRatio: techLevel >= 3 ? 2 : 1,
                    maximumGain: 40, outputLimit: techLevel >= 3 ? 105 : 120)
            }
        }
        return PresetPayload(techLevel: level(techLevel), left: bands(gainShift: 0), right: bands(gainShift: -3))
    }

    /// A chain for `preset` with personalization enabled at `intensity` and the preset installed
    /// (the chain keeps the retained handle; `finish` releases it).
    static func chain(_ preset: PresetPayload, channels: Int = 2, intensity: Float = 1,
                      maximumFrameCount: Int = 256) throws -> ProcessingChain {
        let spec = ProcessingSpec(sampleRate: fs, maximumFrameCount: maximumFrameCount, channelCount: channels)
        var chain = ProcessingChain(
            spec: spec, settings: ChainSettings(personalization: PersonalizationSettings(isEnabled: true, intensity: intensity)),
            personalizationTechLevel: preset.techLevel.value)
        let handle = Unmanaged.passRetained(try PreparedPersonalization(preset: preset, sampleRate: fs, techLevel: preset.techLevel.value))
        guard case .installed(retired: nil) = chain.installPersonalization(handle) else { fatalError("not installed") }
        return chain
    }

    /// Removes and releases the installed preset (the control side's part of the protocol).
    static func finish(_ chain: inout ProcessingChain) {
        chain.removePersonalization()?.release()
    }

    /// Amplitude of a sine at `level` dB SPL for calibration `calibration` (full-scale sine).
    static func amplitude(level: Double, calibration: Double = 100) -> Double { pow(10, (level - calibration) / 20) }

    /// Steady-state gain (dB) of `chain` for a sine at `frequency`, `level` dB SPL on every
    /// channel: `settle` samples (400 ms) to settle, then a 100 ms window. One value per channel.
    /// (Detectors start at the reference level and release at 4.3 dB per time constant.)
    static func sineGain(_ chain: inout ProcessingChain, channels: Int, frequency: Double, level: Double,
                         settle: Int = 19200) -> [Double] {
        let amplitude = Self.amplitude(level: level)
        let window = 4800
        let tone = Measurement.sine(frequency: frequency, amplitude: amplitude, sampleRate: fs, count: settle + window)
        let out = runChain(&chain, Array(repeating: tone, count: channels))
        return (0..<channels).map { c in
            let a = Measurement.toneAmplitude(out.channel(c, frames: settle..<(settle + window)), frequency: frequency, sampleRate: fs)
            return 20 * log10(a / amplitude)
        }
    }

    /// THD+N in dB: everything but the fundamental (±3 main-lobe widths) relative to it, from a
    /// Kaiser-windowed spectrum; DC to 20 kHz.
    static func thdPlusNoise(_ samples: [Float], frequency: Double) -> Double {
        let (power, binWidth) = Spectrum.powerSpectrum(samples, sampleRate: fs)
        let lobe = 3 * 6.5 * fs / Double(samples.count)   // Kaiser β=20 main lobe ≈ ±6.5 bins of N
        var fundamental = 0.0, rest = 0.0
        for (k, p) in power.enumerated() {
            let f = Double(k) * binWidth
            if abs(f - frequency) <= lobe { fundamental += p } else if f > 10 && f <= 20000 { rest += p }
        }
        return 10 * log10(rest / fundamental)
    }
}
