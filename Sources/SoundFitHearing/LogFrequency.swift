import Foundation

/// Values given at some frequencies, read in between by interpolating linearly in log frequency
/// (as audiograms, prescriptions and earphone tables are drawn), and held flat beyond the ends.
public enum LogFrequency {
    /// The value at `frequency` of `points` (ascending in frequency); 0 without points.
    public static func interpolate(_ points: [(frequency: Double, value: Double)], at frequency: Double) -> Double {
        guard let first = points.first, let last = points.last else { return 0 }
        if frequency <= first.frequency { return first.value }
        if frequency >= last.frequency { return last.value }
        let upper = points.firstIndex { $0.frequency >= frequency }!
        let a = points[upper - 1], b = points[upper]
        if b.frequency == frequency { return b.value }
        let t = (log2(frequency) - log2(a.frequency)) / (log2(b.frequency) - log2(a.frequency))
        return a.value + t * (b.value - a.value)
    }
}
