/// The output safety limit: a broadband peak limiter at the end of the chain that never lets a
/// sample of any channel exceed `ceiling`, whatever the stages before it do (several loud bands
/// of the personalization can sum above each band's own limit).
///
/// - No look-ahead, so no latency: the gain follows a peak envelope with instant attack
///   (`envelope ≥ |sample|` always, so `sample × ceiling / envelope ≤ ceiling`) and an
///   exponential release (`releaseSeconds`). One gain for all channels keeps the image.
/// - Transparent below the ceiling: while the envelope stays at or below it, samples pass
///   untouched (bit-exact).
/// - `largestReduction` (linear gain, 1 = none) since the last `takeLargestReduction()`, for
///   `/status`.
///
/// Threads: every method is real-time safe; one owner at a time.
public struct OutputLimiter: Sendable, Equatable {
    public static var releaseSeconds: Double { 0.05 }
    /// Keeps `x × (ceiling / envelope)` at or below the ceiling after float rounding.
    private static let safety: Float = 1 - 0x1p-20

    /// The highest sample magnitude allowed (linear; 1 = full scale).
    public private(set) var ceiling: Float
    public private(set) var sampleRate: Double
    private var envelope: Float = 0
    private var release: Float = 0
    /// The smallest gain applied since the last `takeLargestReduction()`.
    public private(set) var largestReduction: Float = 1

    /// `ceiling` may be `.infinity`: no limit (the stage then only scans for peaks).
    public init(ceiling: Float = .infinity, sampleRate: Double) {
        precondition(ceiling > 0 && !ceiling.isNaN && sampleRate > 0)
        self.ceiling = ceiling
        self.sampleRate = sampleRate
        release = Self.releaseCoefficient(sampleRate)
    }

    /// The ceiling for `maximumSPL` dB SPL with a full-scale sine standing for `fullScaleSPL`.
    public static func ceiling(maximumSPL: Double, fullScaleSPL: Double) -> Float {
        Float(Decibels.amplitude(maximumSPL - fullScaleSPL))
    }

    /// Real-time safe. A ceiling that is not a positive number is ignored.
    public mutating func setCeiling(_ newCeiling: Float) {
        guard newCeiling > 0, !newCeiling.isNaN else { return }
        ceiling = newCeiling
    }

    public mutating func setSampleRate(_ newRate: Double) {
        precondition(newRate > 0)
        sampleRate = newRate
        release = Self.releaseCoefficient(newRate)
        envelope = 0
    }

    /// Returns the largest reduction since the last call and starts a new interval.
    public mutating func takeLargestReduction() -> Float {
        defer { largestReduction = 1 }
        return largestReduction
    }

    /// Limits `channelCount` non-interleaved channels in place. Real-time safe.
    public mutating func process(_ buffers: UnsafePointer<UnsafeMutablePointer<Float>>, channelCount: Int, frameCount: Int) {
        guard channelCount > 0, frameCount > 0 else { return }
        // Fast path: nothing near the ceiling in this block and no release in progress.
        if envelope <= ceiling {
            var above = false
            for channel in 0..<channelCount where !above {
                above = anyMagnitudeAbove(ceiling, buffers[channel], count: frameCount)
            }
            if !above {
                envelope = 0
                return
            }
        }
        for frame in 0..<frameCount {
            var peak: Float = 0
            for channel in 0..<channelCount { peak = max(peak, abs(buffers[channel][frame])) }
            envelope = max(peak, envelope * release)
            guard envelope > ceiling else { continue }
            let gain = ceiling / envelope * Self.safety
            // A release over silence changes nothing audible: only count what reduced a sample.
            if peak > 0 { largestReduction = min(largestReduction, gain) }
            for channel in 0..<channelCount { buffers[channel][frame] *= gain }
        }
    }

    private static func releaseCoefficient(_ sampleRate: Double) -> Float {
        Float(libmExp(-1 / (releaseSeconds * sampleRate)))
    }
}
