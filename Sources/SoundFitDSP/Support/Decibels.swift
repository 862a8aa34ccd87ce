/// Conversions between decibels and linear amplitude. Real-time safe.
public enum Decibels {
    /// Linear amplitude of `decibels` (20·log10 convention). `0` dB is exactly `1`.
    @inline(__always)
    public static func amplitude(_ decibels: Double) -> Double {
        decibels == 0 ? 1 : libmPow(10, decibels / 20)
    }

    /// Decibels of a linear amplitude ratio; `-inf` for zero.
    @inline(__always)
    public static func decibels(_ amplitude: Double) -> Double {
        20 * libmLog10(amplitude)
    }
}

/// Clamps a setting into the safe bounds `lower...upper`; NaN becomes `fallback`, infinities the
/// nearest bound. Real-time safe.
@inline(__always)
func clampParameter(_ value: Float, _ lower: Float, _ upper: Float, fallback: Float) -> Float {
    if value.isNaN { return fallback }
    return min(max(value, lower), upper)
}
