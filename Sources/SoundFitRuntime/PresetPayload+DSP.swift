import SoundFitDSP
import SoundFitHearing

extension MultibandPreset {
    /// The DSP form of a generated preset payload (same fields, same units).
    init(_ payload: PresetPayload) {
        func bands(_ bands: [PresetPayload.Band]) -> [BandDynamics] {
            bands.map {
                BandDynamics(
                    centre: $0.centre, gain: $0.gain, referenceLevel: $0.referenceLevel, ratio: $0.ratio, knee: $0.knee,
                    expansionKnee: $0.expansionKnee, expansionRatio: $0.expansionRatio, maximumGain: $0.maximumGain,
                    outputLimit: $0.outputLimit, attack: $0.attack, release: $0.release)
            }
        }
        self.init(techLevel: payload.techLevel.techLevel, calibration: payload.calibration,
                  left: bands(payload.left), right: bands(payload.right))
    }
}
