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
/// - **Hold as long as the signal's half-period, then release** (`EarLimiter`): the envelope is
///   the largest peak of a window that spans the longest half-period (interval between sign
///   changes) seen in the last `holdSeconds` (13 ms: a half-period of every tone from about 40 Hz
///   up). A window that long always holds one of a tone's peaks, so for a steady tone the gain
///   stays constant: no ripple at the signal's rate, no distortion (the old 50 ms envelope
///   released between the peaks of a 50 Hz tone: 4.8 % THD). And it is no longer than it must
///   be: a 2 kHz tone is held 0.8–1.6 ms, so after a limited onset the gain follows the
///   personalization's attack instead of holding its overshoot (a fixed 13 ms hold left the
///   output 4–6 dB low 3–7 ms after a 55→90 dB SPL step, and made the ANSI S3.22 attack read
///   7–11 ms where the preset states 5). Past the window the envelope releases in
///   `releaseSeconds`.
/// - `largestReduction` (linear gain, 1 = none) since the last `takeLargestReduction()`, for
///   `/status`; per ear in `largestReductions`.
///
/// Threads: every method is real-time safe (a plain value, no allocation); one owner at a time.
public struct OutputLimiter: Sendable, Equatable {
    /// The longest hold: the window never spans more than this (15 of 16 sub-blocks of it, plus
    /// the current one), which is a half-period of a 38 Hz tone.
    public static var holdSeconds: Double { 0.013 }
    /// Sub-blocks a window spans beyond the whole sub-blocks in the longest half-period seen, so
    /// that it always spans a half-period (a tone's peak). One: the window then ripples 0.15 dB
    /// at most on a 440 Hz tone 14 dB over the ceiling (THD+N −82 dB), and none at 50, 100 Hz or
    /// 1–3 kHz; two made the ANSI S3.22 attack of N7 at tech level 2 read 23 % short.
    static var holdMarginBlocks: Int { 1 }
    /// The envelope's time constant once the window has passed a peak.
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
/// Time runs in sub-blocks of `OutputLimiter.holdSeconds`/16 (39 samples at 48 kHz). For each of
/// the last 15 it keeps the largest peak (`blockPeaks`) and the longest half-period — the samples
/// between two sign changes of the ear's first channel, or since the last one (`blockHalfPeriods`;
/// silence and DC count as long). The window is the `holdBlocks` latest sub-blocks and the current
/// one, where `holdBlocks` covers the longest half-period of the ring plus
/// `OutputLimiter.holdMarginBlocks`, at most 15. The envelope is the window's largest peak, or the
/// previous envelope released by `OutputLimiter.releaseSeconds`, whichever is larger. It is never
/// below the current frame's peak, which keeps every sample at or below the ceiling.
///
/// Threads: real-time safe (a plain value); one owner at a time.
public struct EarLimiter: Sendable, Equatable {
    /// Keeps `x × (ceiling / envelope)` at or below the ceiling after float rounding.
    private static let safety: Float = 1 - 0x1p-20
    /// The ring's length in use: lane 15 of the `SIMD16` rings stays 0.
    private static let ringBlocks = 15

    /// The highest sample magnitude allowed (linear; 1 = full scale).
    public private(set) var ceiling: Float
    private var envelope: Float = 0
    private var release: Float = 0
    /// The peaks of the 15 sub-blocks before the current one, a ring (lane 15 unused, 0).
    private var blockPeaks = SIMD16<Float>(repeating: 0)
    /// The longest half-period (samples) that ended in, or was still open at the end of, each of
    /// those sub-blocks; the same ring.
    private var blockHalfPeriods = SIMD16<Float>(repeating: 0)
    /// How many of the latest ring entries the window spans; updated once per sub-block.
    private var holdBlocks = 1
    /// The largest peak of those entries.
    private var windowPeak: Float = 0
    private var blockPeak: Float = 0
    /// The longest half-period that ended in the current sub-block.
    private var blockHalfPeriod: Float = 0
    /// Samples since the first channel last changed sign, and its sign then.
    private var samplesSinceSignChange: Float = 0
    private var negative = false
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

    /// Forgets the signal: nothing is near the ceiling, so the next onset starts afresh (its own
    /// half-periods then set the window).
    private mutating func clear() {
        envelope = 0
        blockPeaks = SIMD16(repeating: 0)
        blockHalfPeriods = SIMD16(repeating: 0)
        holdBlocks = 1
        windowPeak = 0
        blockPeak = 0
        blockHalfPeriod = 0
        samplesSinceSignChange = 0
        blockIndex = 0
        blockPosition = 0
    }

    /// Closes the current sub-block: stores its peak and half-period, then sets the window.
    private mutating func closeBlock() {
        blockPeaks[blockIndex] = blockPeak
        blockHalfPeriods[blockIndex] = max(blockHalfPeriod, samplesSinceSignChange)
        // Whole sub-blocks in the longest half-period, plus the margin; never past the ring.
        let covering = Int(blockHalfPeriods.max() / Float(blockLength)) &+ OutputLimiter.holdMarginBlocks
        holdBlocks = min(covering, Self.ringBlocks)
        var peak: Float = 0
        var index = blockIndex
        for _ in 0..<holdBlocks {
            peak = max(peak, blockPeaks[index])
            index = index == 0 ? Self.ringBlocks &- 1 : index &- 1
        }
        windowPeak = peak
        blockIndex = blockIndex == Self.ringBlocks &- 1 ? 0 : blockIndex &+ 1
        blockPeak = 0
        blockHalfPeriod = 0
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
        let signChannel = buffers[first]
        for frame in 0..<frameCount {
            var peak: Float = 0
            var channel = first
            while channel < channelCount {
                peak = max(peak, abs(buffers[channel][frame]))
                channel &+= 2
            }
            let isNegative = signChannel[frame] < 0
            if isNegative != negative {
                negative = isNegative
                blockHalfPeriod = max(blockHalfPeriod, samplesSinceSignChange)
                samplesSinceSignChange = 0
            }
            samplesSinceSignChange += 1
            blockPeak = max(blockPeak, peak)
            envelope = max(max(blockPeak, windowPeak), envelope * release)
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
