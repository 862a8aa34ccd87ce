import Foundation
import SoundFitDSP
import SoundFitHearing
import SoundFitModel
import SoundFitRuntime

/// The verification a fitter runs (`soundfit verify`, `GET /verify`): speech-shaped
/// noise (`SpeechShapedNoise`, the Byrne et al. 1994 LTASS) at 55, 65 and 80 dB SPL through the
/// current fitting, rendered offline (`OfflineSoundFit`), the insertion gain measured per ear and
/// band (`BandPowerAnalysis.insertionGains`, ±1/6 octave around each band centre), compared with
/// the target; and a pure-tone sweep (band centres, 40…100 dB SPL) for input-output curves.
///
/// The target of a band at speech level `L` is what the prescription's gain law says for the
/// band's level of that speech: the default variant's preset (`PresetGenerator`, uncorrected by
/// a calibration table) gives `BandDynamics.gain(atLevel:)` at `referenceLevel + (L − 65)` (its
/// reference level is the band level of 65 dB SPL speech), and the intensity enters as the
/// processor applies it (`PersonalizationResponse.appliedGain(lawGain:intensity:)`). At 65 dB SPL
/// and intensity 1 that is the prescribed g65. A tone's target output is the gain law's, at
/// most the broadband output ceiling (`SoundFitRuntime.effectiveMaximumOutputSPL`). Tolerances are the fitting targets': ±1 dB
/// up to 4 kHz, ±2 dB up to 6 kHz (the 6 kHz row); the bands above 6 kHz of tech levels 2 and 4
/// are measured and reported but not judged (`tolerance(centre:)`).
///
/// Off the audio thread only: it allocates and renders for seconds. Run it on a thread of its
/// own (`OfflineSoundFit.render` flushes denormals on the calling thread).
public enum FittingVerification {
    /// Speech levels (dB SPL) of IEC 60118-15: soft, average and loud speech.
    public static let speechLevels: [Double] = [55, 65, 80]
    /// Pure-tone input levels (dB SPL) of the input-output curves.
    public static let toneLevels: [Double] = Array(stride(from: 40.0, through: 100, by: 5))
    /// The sample rate the verification renders at.
    public static let sampleRate = 48000
    /// Samples of speech-shaped noise per level (2^17 at 48 kHz: 2.7 s, 31 Welch segments).
    static let noiseSeconds = 2.7
    /// Duration of each tone and the part of it measured (its end: the detector has settled).
    static let toneSeconds = 0.25, toneMeasuredSeconds = 0.125

    /// The tolerance (dB) of a band at `centre` (1 dB from 250 Hz to 4 kHz, 2 dB up to
    /// 6 kHz). Bands above 6 kHz (tech level 2's 8 kHz, tech level 4's 8 and 11.3 kHz) are
    /// measured and reported but not judged (infinite tolerance): NAL-RP ends at 6 kHz, and the
    /// taper to 0 dB at 10 kHz is steeper than the equalizer's top bands can follow (measured up
    /// to 6 dB over at 11.3 kHz for N7).
    public static func tolerance(centre: Double) -> Double {
        centre <= 4000 * 1.01 ? 1 : centre <= 6000 * 1.01 ? 2 : .infinity
    }

    /// One band at one speech level.
    public struct Band: Sendable, Equatable {
        public var centre: Double
        public var target: Double
        public var measured: Double
        public var tolerance: Double
        public var miss: Double { measured - target }
        public var passes: Bool { abs(miss) <= tolerance }
    }

    /// One ear's bands at one speech level.
    public struct SpeechResult: Sendable, Equatable {
        public var ear: Ear
        public var level: Double
        public var bands: [Band]
    }

    /// One ear's input-output curve of a band: tone levels in, output levels (dB SPL) out.
    public struct ToneCurve: Sendable, Equatable {
        public var ear: Ear
        public var centre: Double
        public var inputs: [Double]
        public var targets: [Double]
        public var measured: [Double]
    }

    /// One ear's prescription at 65 dB SPL speech: the gain prescribed (the default preset's g65,
    /// intensity 1) and the gain applied now (the loaded preset through the intensity; 0 dB when
    /// the personalization is off), per band: `SoundFitRuntime.personalizationGains()`, the
    /// numbers `/personalization/gains` and `/status` report.
    public struct PrescribedCurve: Sendable, Equatable {
        public var ear: Ear
        public var centres: [Double]
        public var prescribed: [Double]
        public var applied: [Double]
    }

    /// Everything measured, with what it was measured on.
    public struct Report: Sendable, Equatable {
        public var techLevel: Int
        public var calibration: Double
        public var intensity: Double
        public var isEnabled: Bool
        /// The preset variant loaded now (the target is always the default's); nil: none.
        public var loadedVariant: String?
        public var speech: [SpeechResult]
        public var tones: [ToneCurve]
        public var prescription: [PrescribedCurve] = []
        /// The output safety limit in force (dB SPL, `--max-output` or less) and each ear's
        /// derived maximum output (`MaximumOutput`): a limit below an ear's derived maximum holds
        /// loud speech (and a severe loss's prescription) down, whatever the fitting says.
        public var outputLimit: Double = .infinity
        public var derivedMaximumOutput: [Ear: Double] = [:]

        /// Ears whose derived maximum output the safety limit cuts.
        public var earsHeldByTheLimit: [Ear] {
            Ear.allCases.filter { (derivedMaximumOutput[$0] ?? -.infinity) > outputLimit + 0.05 }
        }

        /// Every band outside its tolerance, as `left 2000 Hz at 65 dB SPL: measured 18.2 dB, target 20.1 dB (−1.9 dB, tolerance 1 dB)`.
        public var failures: [String] {
            speech.flatMap { result in
                result.bands.filter { !$0.passes }.map { band in
                    "\(result.ear.rawValue) \(format(band.centre, 0)) Hz at \(format(result.level, 0)) dB SPL: measured "
                        + "\(format(band.measured, 1)) dB, target \(format(band.target, 1)) dB (\(format(band.miss, 1, sign: true)) dB, "
                        + "tolerance \(format(band.tolerance, 0)) dB)"
                }
            }
        }

        public var passes: Bool { speech.allSatisfy { $0.bands.allSatisfy(\.passes) } }
    }

    /// Why a verification cannot run.
    public struct Failure: Error, CustomStringConvertible {
        public var description: String
        public init(_ description: String) { self.description = description }
    }

    /// The targets of `bands` at speech level `level` and `intensity` (see the type).
    public static func speechTargets(_ bands: [BandDynamics], level: Double, intensity: Double) -> [Double] {
        bands.map { band in
            PersonalizationResponse.appliedGain(lawGain: band.gain(atLevel: band.referenceLevel + level - 65),
                                                intensity: intensity)
        }
    }

    /// Measures `soundfit`, configured and stereo at `sampleRate`: settles it, then renders the
    /// speech noise and the tones. Throws without a hearing profile or an active session.
    public static func run(_ soundfit: OfflineSoundFit, includeTones: Bool = true) throws -> Report {
        precondition(soundfit.channelCount == 2 && soundfit.sampleRate == sampleRate)
        let runtime = soundfit.runtime
        guard let session = runtime.controller.session else {
            throw Failure("no active processing session to verify")
        }
        guard let profile = runtime.presets.profile else {
            throw Failure("no hearing profile: nothing is prescribed to verify (give one with --profile or --audiogram)")
        }
        let calibration = runtime.calibration
        let techLevel = session.techLevel
        let prescription = PresetGenerator.preset(.default, profile: profile, techLevel: techLevel, calibration: calibration)
        let intensity = Double(session.intensity.value)
        let ears: [(Ear, [BandDynamics])] = [(.left, prescription.left), (.right, prescription.right)]
        let centres = techLevel.bandCentres
        // The broadband output ceiling: no tone comes out louder, whatever the gain law says.
        let ceiling = runtime.effectiveMaximumOutputSPL
        let analysis = BandPowerAnalysis(sampleRate: Double(sampleRate))

        soundfit.settle()
        var speech: [SpeechResult] = []
        for level in speechLevels {
            let noise = SpeechShapedNoise.samples(level: level, fullScaleSPL: calibration, sampleRate: Double(sampleRate),
                                                  seconds: noiseSeconds)
            // One period to settle the detectors at this level, the next one measured: the
            // noise is periodic, so the measured period is the steady state.
            _ = soundfit.render([noise, noise])
            let output = soundfit.render([noise, noise])
            for (channel, (ear, bands)) in ears.enumerated() {
                let gains = analysis.insertionGains(input: noise[...], output: output[channel][...], centres: centres)
                let targets = speechTargets(bands, level: level, intensity: intensity)
                speech.append(SpeechResult(ear: ear, level: level, bands: centres.indices.map { index in
                    Band(centre: centres[index], target: targets[index], measured: gains[index],
                         tolerance: tolerance(centre: centres[index]))
                }))
            }
        }

        var tones: [ToneCurve] = []
        if includeTones {
            let toneFrames = Int(toneSeconds * Double(sampleRate))
            let measuredFrames = Int(toneMeasuredSeconds * Double(sampleRate))
            var curves = ears.flatMap { ear, bands in
                zip(centres, bands).map { centre, band in
                    ToneCurve(ear: ear, centre: centre, inputs: toneLevels,
                              targets: toneLevels.map {
                                  min(ceiling, $0 + PersonalizationResponse.appliedGain(lawGain: band.gain(atLevel: $0), intensity: intensity))
                              },
                              measured: [])
                }
            }
            for (index, centre) in centres.enumerated() {
                for level in toneLevels {
                    let amplitude = pow(10, (level - calibration) / 20)
                    let omega = 2 * Double.pi * centre / Double(sampleRate)
                    let tone = (0..<toneFrames).map { Float(amplitude * sin(omega * Double($0))) }
                    let output = soundfit.render([tone, tone])
                    for channel in 0..<2 {
                        let tail = output[channel].suffix(measuredFrames)
                        let power = tail.reduce(0.0) { $0 + Double($1) * Double($1) } / Double(tail.count)
                        // A full-scale sine (power ½) is `calibration` dB SPL.
                        curves[channel * centres.count + index].measured.append(calibration + 10 * log10(max(power * 2, 1e-30)))
                    }
                }
            }
            tones = curves
        }
        let gains: PersonalizationGains
        do {
            gains = try runtime.personalizationGains()
        } catch {
            throw Failure(error.description)
        }
        let prescribedCurves = [(Ear.left, gains.left), (Ear.right, gains.right)].map { ear, bands in
            PrescribedCurve(ear: ear, centres: bands.centres, prescribed: bands.prescribed, applied: bands.applied)
        }
        var report = Report(techLevel: techLevel.value, calibration: calibration, intensity: intensity,
                            isEnabled: session.isEnabled.value, loadedVariant: session.preset.value?.variant.rawValue,
                            speech: speech, tones: tones, prescription: prescribedCurves)
        report.outputLimit = ceiling
        if techLevel.limits {
            for (ear, bands) in ears { report.derivedMaximumOutput[ear] = MaximumOutput.earMaximum(bands: bands) }
        }
        return report
    }
}

/// `12.3`, `+1.2` (with `sign`), `−0.4`.
fileprivate func format(_ value: Double, _ decimals: Int, sign: Bool = false) -> String {
    let text = String(format: "%.\(decimals)f", value)
    return sign && value >= 0 ? "+" + text : text
}
