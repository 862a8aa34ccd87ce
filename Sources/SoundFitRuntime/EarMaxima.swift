import SoundFitHearing
import SoundFitModel

/// Each ear's maximum output derived from the preset in force (`MaximumOutput`: the power sum of
/// the band maxima that let 75 dB SPL speech peaks through), dB SPL. The output limit of an ear
/// is this or the maximum output (`--max-output`, `/config/max_output`), whichever is lower.
///
/// A pure value: any thread.
public struct EarMaxima: Sendable, Equatable {
    public var left: Double
    public var right: Double

    public init(left: Double, right: Double) {
        self.left = left
        self.right = right
    }

    /// From a generated preset's bands (their gains and centres).
    public init(_ payload: PresetPayload) {
        self.init(left: MaximumOutput.earMaximum(bands: payload.left), right: MaximumOutput.earMaximum(bands: payload.right))
    }
}
