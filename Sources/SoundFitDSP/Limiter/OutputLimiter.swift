/// The output safety limit: one peak limiter per ear at the end of the chain. No sample of any
/// channel exceeds its ear's ceiling, whatever the stages before it do (several loud bands of the
/// personalization can sum above each band's own limit).
///
/// - **Per ear.** Channels follow the chain's convention (`PersonalizationProcessor`): in pairs,
///   the first of a pair is the left ear, the second the right; mono and a lone last channel are
///   the left ear. The channels of one ear share one gain (the image within the ear holds); the
///   two ears are independent, so a loud sound in one ear never ducks the other. Each ear has
///   its own ceiling (`setCeilings(left:right:)`): the smaller of `--max-output` and the ear's
///   derived maximum output.
/// - **No look-ahead, so no latency**: the output stays time-aligned with the input, and bit-exact
///   below the ceiling (the chain's bypass is a plain copy). The gain follows a peak envelope
///   with instant attack — `envelope ≥ |sample|` always, so `sample × ceiling / envelope ≤ ceiling`.
/// - **Hold, then release** (`EarLimiter`): the envelope holds the largest peak of the last
///   `holdSeconds` (13 ms: a half-period of every tone from about 40 Hz up) while the last
///   `recentSeconds` (5.7 ms) still reach 75 % of it — a steady or slowly moving signal, whose gain
///   then stays constant: no ripple at the signal's rate, so no distortion (the old envelope
///   released between the peaks of a 50 Hz tone: 4.8 % THD). When the recent peaks fall below
///   that (a limited onset is over — a compressor's overshoot settles within about 5 ms), the
///   envelope holds only the recent peaks and releases fast (`releaseSeconds`), so the output is
///   back within about 1 dB by 10 ms: the old 50 ms release left it 6–14 dB low for 40–80 ms.
/// - `largestReduction` (linear gain, 1 = none) since the last `takeLargestReduction()`, for
///   `/status`; per ear in `largestReductions`.
///
/// Threads: every method is real-time safe (a plain value, no allocation); one owner at a time.
public struct OutputLimiter: Sendable, Equatable {
    /// How long a peak holds the envelope while the signal stays near it (`holdFraction`; between
    /// 15/16 of this and all of it).
    public static var holdSeconds: Double { 0.013 }
    /// How far back the signal must reach `holdFraction` of the held peak to keep holding it
    /// (between 7/16 and 8/16 of `holdSeconds`: at least 5.7 ms, in which a 50 Hz tone always
    /// reaches 78 % of its peak). Not longer: after a loud onset the personalization's attack
    /// overshoots for about 5 ms (its ANSI S3.22 attack), and a longer memory of that overshoot
    /// holds the output down after it (2.6 dB at 10 ms with 5.7 ms, 3.1 dB with 6.5 ms, N3).
    public static var recentSeconds: Double { holdSeconds * 7 / 16 }
    /// The block count of `recentSeconds` besides the current one.
    static var recentBlocks: Int { 7 }
    /// The share of the held peak the recent peaks must reach to keep holding it (−2.5 dB).
    public static var holdFraction: Float { 0.75 }
    /// The envelope's time constant once the hold is over.
    public static var releaseSeconds: Double { 0.001 }
    /// The look-ahead the limiter needs: none (it reports no latency).
    public static var latencyFrames: Int { 0 }

    /// The left ear's state (channels 1, 3, 5, … counting from 1; mono).
    public private(set) var left: EarLimiter
    /// The right ear's state (channels 2, 4, 6, …).
    public private(set) var right: EarLimiter
    public private(set) var sampleRate: Double

    /// `ceiling` may be `.infinity`: no limit (the stage then only scans for peaks). Both ears
    /// start at `ceiling`.
    public init(ceiling: Float = .infinity, sampleRate: Double) {
        precondition(ceiling > 0 && !ceiling.isNaN && sampleRate > 0)
        self.sampleRate = sampleRate
        left = EarLimiter(ceiling: ceiling, sampleRate: sampleRate)
        right = left
    }

    /// The lower of the two ears' ceilings.
    public var ceiling: Float { min(left.ceiling, right.ceiling) }

    /// The ceiling for `maximumSPL` dB SPL with a full-scale sine standing for `fullScaleSPL`.
    public static func ceiling(maximumSPL: Double, fullScaleSPL: Double) -> Float {
        Float(Decibels.amplitude(maximumSPL - fullScaleSPL))
    }

    /// Both ears' ceilings at once. Real-time safe. A ceiling that is not a positive number is ignored.
    public mutating func setCeiling(_ newCeiling: Float) {
        setCeilings(left: newCeiling, right: newCeiling)
    }

    /// Each ear's ceiling. Real-time safe. A ceiling that is not a positive number is ignored.
    public mutating func setCeilings(left newLeft: Float, right newRight: Float) {
        left.setCeiling(newLeft)
        right.setCeiling(newRight)
    }

    public mutating func setSampleRate(_ newRate: Double) {
        precondition(newRate > 0)
        sampleRate = newRate
        left.setSampleRate(newRate)
        right.setSampleRate(newRate)
    }

    /// The smallest gain applied to either ear since the last `takeLargestReduction()`.
    public var largestReduction: Float { min(left.largestReduction, right.largestReduction) }

    /// Each ear's smallest gain since the last `takeLargestReduction()`.
    public var largestReductions: (left: Float, right: Float) { (left.largestReduction, right.largestReduction) }

    /// Returns the largest reduction (either ear) since the last call and starts a new interval.
    public mutating func takeLargestReduction() -> Float {
        defer {
            left.largestReduction = 1
            right.largestReduction = 1
        }
        return largestReduction
    }

    /// Limits `channelCount` non-interleaved channels in place, each ear on its own. Real-time safe.
    public mutating func process(_ buffers: UnsafePointer<UnsafeMutablePointer<Float>>, channelCount: Int, frameCount: Int) {
        guard channelCount > 0, frameCount > 0 else { return }
        left.process(buffers, first: 0, channelCount: channelCount, frameCount: frameCount)
        if channelCount > 1 {
            right.process(buffers, first: 1, channelCount: channelCount, frameCount: frameCount)
        }
    }
}

/// One ear's peak limiter: the channels `first`, `first + 2`, … of the chain share its gain.
///
/// The peaks of the last 15 sub-blocks of `OutputLimiter.holdSeconds`/16 (`blockPeaks`, a ring)
/// and of the current one give the held peak (all of them) and the recent peak (the current and
/// the `OutputLimiter.recentBlocks` latest: at least 7/16 of the hold). The envelope is the held peak while the recent peak
/// reaches `OutputLimiter.holdFraction` of it, else the recent peak — or the previous envelope released
/// by `OutputLimiter.releaseSeconds`, whichever is larger. It is never below the current frame's
/// peak, which keeps every sample at or below the ceiling.
///
/// Threads: real-time safe (a plain value); one owner at a time.
public struct EarLimiter: Sendable, Equatable {
    /// Keeps `x × (ceiling / envelope)` at or below the ceiling after float rounding.
    private static let safety: Float = 1 - 0x1p-20

    /// The highest sample magnitude allowed (linear; 1 = full scale).
    public private(set) var ceiling: Float
    private var envelope: Float = 0
    private var release: Float = 0
    /// The peaks of the 15 sub-blocks before the current one (lane 15 unused, 0), a ring.
    private var blockPeaks = SIMD16<Float>(repeating: 0)
    /// The largest of `blockPeaks`, and of its `OutputLimiter.recentBlocks` latest; updated once per sub-block.
    private var heldPeak: Float = 0
    private var recentPeak: Float = 0
    private var blockPeak: Float = 0
    private var blockIndex = 0
    private var blockPosition = 0
    private var blockLength = 1
    /// The smallest gain applied since the owner last reset it.
    public internal(set) var largestReduction: Float = 1

    init(ceiling: Float, sampleRate: Double) {
        self.ceiling = ceiling
        setSampleRate(sampleRate)
    }

    mutating func setCeiling(_ newCeiling: Float) {
        guard newCeiling > 0, !newCeiling.isNaN else { return }
        ceiling = newCeiling
    }

    mutating func setSampleRate(_ sampleRate: Double) {
        release = Float(libmExp(-1 / (OutputLimiter.releaseSeconds * sampleRate)))
        // Rounded up by hand: `rounded(.up)` names `FloatingPointRoundingRule`, whose metadata
        // the real-time proof (`@_noLocks`, release builds) rejects.
        let samples = OutputLimiter.holdSeconds * sampleRate / 16
        var length = Int(samples)
        if Double(length) < samples { length &+= 1 }
        blockLength = max(1, length)
        clear()
    }

    private mutating func clear() {
        envelope = 0
        blockPeaks = SIMD16(repeating: 0)
        heldPeak = 0
        recentPeak = 0
        blockPeak = 0
        blockIndex = 0
        blockPosition = 0
    }

    /// Closes the current sub-block: stores its peak and updates the held and recent peaks.
    private mutating func closeBlock() {
        blockPeaks[blockIndex] = blockPeak
        heldPeak = blockPeaks.max()
        var recent: Float = 0
        var index = blockIndex
        for _ in 0..<OutputLimiter.recentBlocks {
            recent = max(recent, blockPeaks[index])
            index = index == 0 ? 14 : index &- 1
        }
        recentPeak = recent
        blockIndex = blockIndex == 14 ? 0 : blockIndex &+ 1
        blockPeak = 0
        blockPosition = 0
    }

    /// Limits the ear's channels (`first`, `first + 2`, … below `channelCount`). Real-time safe.
    mutating func process(_ buffers: UnsafePointer<UnsafeMutablePointer<Float>>, first: Int, channelCount: Int,
                          frameCount: Int) {
        // Fast path: nothing near the ceiling in this block and no reduction in progress.
        if envelope <= ceiling {
            var above = false
            var channel = first
            while channel < channelCount && !above {
                above = anyMagnitudeAbove(ceiling, buffers[channel], count: frameCount)
                channel &+= 2
            }
            if !above {
                clear()
                return
            }
        }
        for frame in 0..<frameCount {
            var peak: Float = 0
            var channel = first
            while channel < channelCount {
                peak = max(peak, abs(buffers[channel][frame]))
                channel &+= 2
            }
            blockPeak = max(blockPeak, peak)
            let recent = max(blockPeak, recentPeak)
            let held = recent >= OutputLimiter.holdFraction * heldPeak ? max(recent, heldPeak) : recent
            envelope = max(held, envelope * release)
            blockPosition &+= 1
            if blockPosition == blockLength { closeBlock() }
            guard envelope > ceiling else { continue }
            let gain = ceiling / envelope * Self.safety
            // A release over silence changes nothing audible: only count what reduced a sample.
            if peak > 0 { largestReduction = min(largestReduction, gain) }
            channel = first
            while channel < channelCount {
                buffers[channel][frame] *= gain
                channel &+= 2
            }
        }
    }
}
