/// The timing of the hearing test's presentations, in seconds.
///
/// A presentation is a tone of `toneSeconds` (steady, or pulsed within that time); a press
/// counts for it when it arrives between `windowStart` and `windowEnd` after the onset; the next
/// onset follows the later of the tone's end and the window's end after a gap drawn uniformly
/// from `gapMinimum…gapMaximum`, so the listener cannot guess the timing.
public struct TestTiming: Sendable, Equatable {
    public var toneSeconds: Double
    public var windowStart: Double
    public var windowEnd: Double
    public var gapMinimum: Double
    public var gapMaximum: Double

    public init(toneSeconds: Double = 1.0, windowStart: Double = 0.15, windowEnd: Double = 1.5,
                gapMinimum: Double = 1.5, gapMaximum: Double = 3.0) {
        self.toneSeconds = toneSeconds
        self.windowStart = windowStart
        self.windowEnd = windowEnd
        self.gapMinimum = gapMinimum
        self.gapMaximum = gapMaximum
    }

    /// The mean time from one onset to the next.
    public var meanPresentationSeconds: Double {
        max(toneSeconds, windowEnd) + (gapMinimum + gapMaximum) / 2
    }
}
