import SoundFitDSP
import SoundFitHearing

extension MultibandPreset {
    /// The DSP form of a generated preset payload: its bands as they are, for its tech level.
    init(_ payload: PresetPayload) {
        self.init(techLevel: payload.techLevel.value, calibration: payload.calibration, left: payload.left, right: payload.right)
    }
}
