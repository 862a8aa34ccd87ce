/// An exact phase accumulator: a `UInt64` where 2⁶⁴ is one cycle.
///
/// The increment is `round(frequency / sampleRate · 2⁶⁴)`, so after `N` samples the phase is
/// exactly `N · increment mod 2⁶⁴`: it never drifts, however long it runs (the only error is the
/// rounding of the increment, below 10⁻¹⁶ relative, i.e. 10⁻¹⁰ cycles after ten hours).
/// Frequency changes keep the phase (phase-continuous).
///
/// Real-time safe.
public struct ModulatorPhase: Sendable, Equatable {
    /// The phase, 2⁶⁴ = one cycle.
    public var rawValue: UInt64
    /// Phase advance per sample, 2⁶⁴ = one cycle.
    public var increment: UInt64

    public init(rawValue: UInt64 = 0, increment: UInt64 = 0) {
        self.rawValue = rawValue
        self.increment = increment
    }

    /// The increment for `frequency` Hz at `sampleRate` (`0 <= frequency < sampleRate`).
    @inline(__always)
    public static func increment(frequency: Double, sampleRate: Double) -> UInt64 {
        let cycles = (frequency / sampleRate).truncatingRemainder(dividingBy: 1)
        let scaled = (cycles < 0 ? cycles + 1 : cycles) * 0x1p64
        // Round to nearest: truncation of x + 0.5 (x >= 0).
        let rounded = scaled + 0.5
        guard rounded.isFinite, rounded >= 0, rounded < 0x1p64 else { return 0 }
        return UInt64(rounded)
    }

    /// The phase in cycles, `0 ..< 1`.
    @inline(__always)
    public var cycles: Double { Double(rawValue >> 11) * 0x1p-53 }

    /// Advances by `frames` samples: exactly `rawValue += frames · increment (mod 2⁶⁴)`.
    @inline(__always)
    public mutating func advance(frames: Int) {
        rawValue &+= UInt64(truncatingIfNeeded: frames) &* increment
    }

    /// `|sin(2π·phase)|` for a phase in 2⁶⁴ units, accurate to 1e-9 (float64 polynomial).
    ///
    /// Doubling the phase (mod 2⁶⁴) folds the half-period of `|sin|` away: with
    /// `u = 2·phase mod 1`, `|sin(2π·phase)| = sin(π·u)`, and `sin(π·u) = sin(π·min(u, 1 - u))`
    /// leaves an argument in `[0, π/2]` for a Taylor polynomial to degree 13 (error < 7e-10).
    @inline(__always)
    public static func absoluteSine(_ phase: UInt64) -> Double {
        let u = Double((phase &<< 1) >> 11) * 0x1p-53
        let x = min(u, 1 - u) * Double.pi
        let x2 = x * x
        // x - x³/3! + x⁵/5! - x⁷/7! + x⁹/9! - x¹¹/11! + x¹³/13!
        var p = 1.0 / 6_227_020_800
        p = p * x2 - 1.0 / 39_916_800
        p = p * x2 + 1.0 / 362_880
        p = p * x2 - 1.0 / 5_040
        p = p * x2 + 1.0 / 120
        p = p * x2 - 1.0 / 6
        return x + x * x2 * p
    }
}
