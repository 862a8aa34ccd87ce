/// Whether an ear's result may become the hearing profile without a person deciding so.
extension PureToneAudiometry.EarResult {
    /// The highest level a profile point may have (`Audiogram.levelRange`).
    public static let highestProfileLevel = Audiogram.levelRange.upperBound

    /// Why this result must not become the hearing profile automatically (it is kept and applied
    /// only by an explicit `/test/submit`); empty when it may. One line per reason:
    /// unreliable (naming each rule that failed), incomplete (500, 1000, 2000 and 4000 Hz each
    /// need a threshold or a no response), a masking dilemma, masking needed but not done.
    public var problems: [String] {
        var problems = reliabilityProblems.map { "unreliable: \($0)" }
        let measured = Set(thresholds.map(\.frequency)).union(noResponse)
        let missing = Audiogram.requiredFrequencies.filter { !measured.contains($0) }
        if !missing.isEmpty {
            problems.append("incomplete: no result at \(missing.map(format).joined(separator: ", ")) Hz")
        }
        if !maskingDilemmas.isEmpty {
            problems.append("masking dilemma at \(maskingDilemmas.map(format).joined(separator: ", ")) Hz")
        }
        if !maskingNotDone.isEmpty {
            problems.append("masking needed but not done at \(maskingNotDone.map(format).joined(separator: ", ")) Hz (the other ear was not tested)")
        }
        return problems
    }

    /// The points the fitting takes from this result, ascending in frequency: each threshold, and
    /// for a no response at X dB HL the point X + 5 dB (capped at 120 dB HL) — the next level the
    /// audiometer would have presented, the lowest the threshold can be. Our rule (the issue's
    /// "maximum + 5 dB, as fitting software does"; no published source for it was found). A
    /// masking dilemma gives no point, and no point is ever copied from another frequency.
    public var profilePoints: [(frequency: Double, level: Double)] {
        outcomes.compactMap { point in
            switch point.outcome {
            case .threshold(let level, _): (frequency: point.frequency, level: level)
            case .noResponse(let level, _): (frequency: point.frequency, level: min(level + 5, Self.highestProfileLevel))
            case .maskingDilemma: nil
            }
        }
    }
}
