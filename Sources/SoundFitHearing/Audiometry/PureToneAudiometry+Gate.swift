/// Whether an ear's result may become the hearing profile without a person deciding so.
extension PureToneAudiometry.EarResult {
    /// Why this result must not become the hearing profile automatically (it is kept and applied
    /// only by an explicit `/test/submit`); empty when it may.
    public var problems: [String] {
        var problems: [String] = []
        if !isReliable { problems.append("unreliable") }
        let measured = Set(thresholds.map(\.frequency)).union(noResponse)
        let missing = Audiogram.requiredFrequencies.filter { !measured.contains($0) }
        if !missing.isEmpty {
            problems.append("incomplete: no result at \(missing.map(format).joined(separator: ", ")) Hz")
        }
        return problems
    }

    /// The points the fitting takes from this result: each threshold, in dB HL, ascending in
    /// frequency.
    public var profilePoints: [(frequency: Double, level: Double)] {
        thresholds
    }
}
