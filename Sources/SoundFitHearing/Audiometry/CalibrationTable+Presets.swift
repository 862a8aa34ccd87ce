import SoundFitDSP
import SoundFitModel

extension PresetPayload {
    /// The preset for earphones that play `table`'s corrections louder than nominal, per ear
    /// and band (each band corrected at its centre frequency).
    ///
    /// A band's levels are dB SPL at the ear, reached from the signal's dBFS through the
    /// calibration. Where the earphone plays `c` dB louder, the real level is `c` above that,
    /// so every level the band compares against — `referenceLevel`, `knee`, `expansionKnee` and
    /// `outputLimit` — moves `c` down in dBFS terms: the compression acts at the real levels
    /// the prescription meant, and the band's output limit holds at the real ear. Gains are
    /// differences (processed re unprocessed at the same ear) and stay. A shifted level outside
    /// its field's range is held at the range's end (corrections are ±40 dB at most; the
    /// broadband output safety limit is corrected separately, `CalibrationTable.largestCorrection`).
    public func corrected(by table: CalibrationTable) -> PresetPayload {
        guard !table.isEmpty else { return self }
        var result = self
        result.left = left.map { Self.correct($0, by: table.correction(ear: .left, frequency: $0.centre)) }
        result.right = right.map { Self.correct($0, by: table.correction(ear: .right, frequency: $0.centre)) }
        return result
    }

    private static func correct(_ band: BandDynamics, by correction: Double) -> BandDynamics {
        guard correction != 0 else { return band }
        func shifted(_ value: Double, _ field: BandDynamics.Field) -> Double {
            let moved = value - correction
            guard let range = field.range else { return moved }
            return min(max(moved, range.lowerBound), range.upperBound)
        }
        var band = band
        band.referenceLevel = shifted(band.referenceLevel, .referenceLevel)
        band.knee = shifted(band.knee, .knee)
        band.expansionKnee = band.expansionKnee.map { shifted($0, .expansionKnee) }
        band.outputLimit = shifted(band.outputLimit, .outputLimit)
        return band
    }
}
