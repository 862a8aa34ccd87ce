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

    /// The position of `phase` within the half-cycle of `|sin|`, as an integer in `0 ..< 2²⁴`
    /// converted exactly to float: `2·phase mod 2⁶⁴`, top 24 bits.
    @inline(__always)
    public static func halfCycleFraction(_ phase: UInt64) -> Float {
        Float(Int32(truncatingIfNeeded: (phase &<< 1) &>> 40))
    }

    /// `|sin(2π·phase)|` from `halfCycleFraction(phase)`, in float32, eight at a time:
    /// with `u = fraction / 2²⁴`, `|sin(2π·phase)| = sin(π·u) = cos(π·(u - ½))`, an even
    /// Taylor polynomial to degree 12 on `[-π/2, π/2]` (truncation < 7e-9; with the 2⁻²⁴
    /// quantization of `u` and float rounding the result is within 4e-7 of the exact value).
    @inline(__always)
    public static func absoluteSine(halfCycleFractions f: SIMD8<Float>) -> SIMD8<Float> {
        let x = (f * 0x1p-24 - 0.5) * Float.pi
        let x2 = x * x
        var p = SIMD8<Float>(repeating: 1.0 / 479_001_600)
        p = p * x2 - 1.0 / 3_628_800
        p = p * x2 + 1.0 / 40_320
        p = p * x2 - 1.0 / 720
        p = p * x2 + 1.0 / 24
        p = p * x2 - 0.5
        return p * x2 + 1
    }
}
